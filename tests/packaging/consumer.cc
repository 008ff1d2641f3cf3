// A program that embeds hogwild: trains on generated data and checks it learned something.
#include <hogwild/hogwild.h>

#include <cstdio>

int main() {
  hogwild::SparseGeneratorConfig data_config;
  data_config.rows = 2000;
  data_config.test_rows = 500;
  data_config.features = 200;
  data_config.nnz_per_row = 10;
  data_config.label_noise = 0.0;
  const auto problem = hogwild::generate_sparse(data_config);
  hogwild::TrainConfig config;
  config.threads = 2;
  config.epochs = 5;
  const auto report = hogwild::train(config, problem.train, &problem.test);
  const double accuracy = report.epochs.back().test->accuracy;
  std::printf("consumer: test accuracy %.3f\n", accuracy);
  return accuracy > 0.6 ? 0 : 1;
}
