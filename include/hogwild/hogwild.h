#pragma once

/// Umbrella header: the whole public API of hogwild.
#include "hogwild/dataset.h"
#include "hogwild/delay.h"
#include "hogwild/error.h"
#include "hogwild/generator.h"
#include "hogwild/libsvm.h"
#include "hogwild/loss.h"
#include "hogwild/param_store.h"
#include "hogwild/policy.h"
#include "hogwild/random.h"
#include "hogwild/report.h"
#include "hogwild/schedule.h"
#include "hogwild/staleness.h"
#include "hogwild/trainer.h"
