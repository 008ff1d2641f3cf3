// Convergence against independent optima: the least-squares closed form (Eigen), a long
// full-batch Newton solve for L2-logistic regression, and a serial run for Hogwild.
#include <doctest/doctest.h>

#include <Eigen/Dense>
#include <cmath>

#include "engine/rng.h"
#include "hogwild/generator.h"
#include "hogwild/trainer.h"

using namespace hogwild;

namespace {

// Small enough for dense linear algebra, sparse enough to exercise the sparse L2 scaling
// (features occur with very different frequencies).
SparseProblem small_problem() {
  SparseGeneratorConfig c;
  c.rows = 4000;
  c.features = 60;
  c.nnz_per_row = 8;
  c.zipf = 0.8;
  c.label_noise = 0.1;
  c.seed = 11;
  return generate_sparse(c);
}

Eigen::MatrixXd dense(const Dataset& d) {
  Eigen::MatrixXd x = Eigen::MatrixXd::Zero(static_cast<Eigen::Index>(d.rows()),
                                            static_cast<Eigen::Index>(d.num_features));
  for (std::size_t i = 0; i < d.rows(); ++i) {
    const auto row = d.row(i);
    for (std::size_t k = 0; k < row.indices.size(); ++k) x(i, row.indices[k]) = row.values[k];
  }
  return x;
}

Eigen::VectorXd labels(const Dataset& d) {
  Eigen::VectorXd y(static_cast<Eigen::Index>(d.rows()));
  for (std::size_t i = 0; i < d.rows(); ++i) y(i) = d.labels[i];
  return y;
}

double logistic_objective(const Eigen::MatrixXd& x, const Eigen::VectorXd& y,
                          const Eigen::VectorXd& w, double l2) {
  const Eigen::VectorXd m = x * w;
  double sum = 0;
  for (Eigen::Index i = 0; i < m.size(); ++i) sum += LogisticLoss::value(m(i), y(i));
  return sum / static_cast<double>(m.size()) + 0.5 * l2 * w.squaredNorm();
}

// Full-batch Newton's method: converges to machine precision on this strongly convex problem.
Eigen::VectorXd newton_logistic(const Eigen::MatrixXd& x, const Eigen::VectorXd& y, double l2) {
  const double n = static_cast<double>(x.rows());
  Eigen::VectorXd w = Eigen::VectorXd::Zero(x.cols());
  for (int it = 0; it < 50; ++it) {
    const Eigen::VectorXd m = x * w;
    Eigen::VectorXd g_m(m.size()), h_m(m.size());
    for (Eigen::Index i = 0; i < m.size(); ++i) {
      const double s = 1.0 / (1.0 + std::exp(y(i) * m(i)));  // sigmoid(-y m)
      g_m(i) = -y(i) * s;
      h_m(i) = s * (1 - s);
    }
    const Eigen::VectorXd grad = x.transpose() * g_m / n + l2 * w;
    const Eigen::MatrixXd hess = x.transpose() * h_m.asDiagonal() * x / n +
                                 l2 * Eigen::MatrixXd::Identity(x.cols(), x.cols());
    const Eigen::VectorXd delta = hess.ldlt().solve(grad);
    w -= delta;
    if (delta.norm() < 1e-12) break;
  }
  return w;
}

Eigen::VectorXd to_eigen(const std::vector<float>& w) {
  Eigen::VectorXd v(static_cast<Eigen::Index>(w.size()));
  for (std::size_t j = 0; j < w.size(); ++j) v(static_cast<Eigen::Index>(j)) = w[j];
  return v;
}

}  // namespace

TEST_CASE("serial least squares reaches the closed-form optimum") {
  auto p = small_problem();
  // Real-valued targets: the hidden margin plus Gaussian noise.
  detail::Rng rng(3);
  for (std::size_t i = 0; i < p.train.rows(); ++i) {
    const auto row = p.train.row(i);
    double m = 0;
    for (std::size_t k = 0; k < row.indices.size(); ++k)
      m += p.hidden_weights[row.indices[k]] * row.values[k];
    p.train.labels[i] = static_cast<float>(m + 0.1 * rng.normal());
  }
  const double l2 = 1e-3;
  const Eigen::MatrixXd x = dense(p.train);
  const Eigen::VectorXd y = labels(p.train);
  const double n = static_cast<double>(x.rows());
  const Eigen::MatrixXd a =
      x.transpose() * x / n + l2 * Eigen::MatrixXd::Identity(x.cols(), x.cols());
  const Eigen::VectorXd w_star = a.ldlt().solve(x.transpose() * y / n);
  auto objective = [&](const Eigen::VectorXd& w) {
    return 0.5 * (x * w - y).squaredNorm() / n + 0.5 * l2 * w.squaredNorm();
  };

  TrainConfig config;
  config.model = hogwild::LinearModel{hogwild::LossKind::kSquared};
  config.policy = Policy::kSerial;
  config.l2 = l2;
  config.epochs = 150;
  config.optimizer.step = 0.5;
  config.optimizer.decay = 0.97;
  const auto report = hogwild::train(config, p.train, nullptr);
  const Eigen::VectorXd w = to_eigen(report.weights);
  const double gap = (objective(w) - objective(w_star)) / objective(w_star);
  MESSAGE("least squares: relative objective gap " << gap << ", relative distance "
                                                   << (w - w_star).norm() / w_star.norm());
  // Stated tolerance: within 1e-3 of the optimal objective, 5% of the optimum's norm.
  CHECK(gap >= -1e-9);
  CHECK(gap < 1e-3);
  CHECK((w - w_star).norm() / w_star.norm() < 0.05);
  // The report's own objective agrees with the independent computation.
  CHECK(report.epochs.back().train.objective.value() ==
        doctest::Approx(objective(w)).epsilon(1e-4));
}

TEST_CASE("serial L2-logistic regression reaches the Newton optimum within 1e-3") {
  const auto p = small_problem();
  const double l2 = 1e-2;
  const Eigen::MatrixXd x = dense(p.train);
  const Eigen::VectorXd y = labels(p.train);
  const Eigen::VectorXd w_star = newton_logistic(x, y, l2);
  const double f_star = logistic_objective(x, y, w_star, l2);

  TrainConfig config;
  config.policy = Policy::kSerial;
  config.l2 = l2;
  config.epochs = 150;
  config.optimizer.step = 1.0;
  config.optimizer.decay = 0.97;
  const auto report = hogwild::train(config, p.train, nullptr);
  const double f = logistic_objective(x, y, to_eigen(report.weights), l2);
  MESSAGE("logistic: optimum " << f_star << ", SGD " << f << ", relative gap "
                               << (f - f_star) / f_star);
  CHECK(f >= f_star - 1e-9);
  CHECK((f - f_star) / f_star < 1e-3);
}

TEST_CASE("Hogwild with several threads ends close to the serial run") {
  SparseGeneratorConfig c;
  c.rows = 20000;
  c.test_rows = 5000;
  c.features = 5000;
  c.nnz_per_row = 40;
  const auto p = generate_sparse(c);
  TrainConfig config;
  config.epochs = 8;
  config.l2 = 1e-5;
  config.replicate = 0;  // plain shared Hogwild! (replicas: tests/test_replicas.cc)
  config.policy = Policy::kSerial;
  const auto serial = hogwild::train(config, p.train, &p.test);
  const double serial_objective = serial.epochs.back().train.objective.value();
  const double serial_accuracy = serial.epochs.back().test->accuracy.value();
  for (const auto policy : {Policy::kRacy, Policy::kAtomic, Policy::kStriped, Policy::kLocked}) {
    for (const int threads : {2, 4}) {
      CAPTURE(to_string(policy));
      CAPTURE(threads);
      config.policy = policy;
      config.threads = threads;
      const auto parallel = hogwild::train(config, p.train, &p.test);
      const double objective = parallel.epochs.back().train.objective.value();
      // Stated margin: 2% of the serial objective, 1 point of test accuracy.
      CHECK(std::abs(objective - serial_objective) / serial_objective < 0.02);
      CHECK(std::abs(parallel.epochs.back().test->accuracy.value() - serial_accuracy) < 0.01);
    }
  }
}

TEST_CASE("linear models take every step schedule, one step per epoch") {
  const auto p = small_problem();
  TrainConfig c;
  c.policy = Policy::kSerial;
  c.epochs = 4;
  c.optimizer.step = 0.8;
  c.optimizer.schedule = Schedule::kInverse;
  c.optimizer.schedule_scale = 2;
  const Report inverse = train(c, p.train, nullptr);
  for (int e = 1; e <= 4; ++e) {
    CHECK(inverse.epochs[static_cast<std::size_t>(e)].step ==
          doctest::Approx(0.8 / (1 + (e - 1) / 2.0)));
  }
  // A constant step is the epoch decay with a factor of 1, bit for bit.
  c.optimizer.schedule = Schedule::kConstant;
  const Report constant = train(c, p.train, nullptr);
  c.optimizer.schedule = Schedule::kEpoch;
  c.optimizer.decay = 1;
  const Report undecayed = train(c, p.train, nullptr);
  CHECK(constant.weights == undecayed.weights);
  CHECK(constant.weights != inverse.weights);
}
