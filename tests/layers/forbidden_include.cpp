// A config file that reaches into the AOI, which the config does not link: the input of
// tests/layers/check_layers_test.cmake, which feeds it to cmake/check_layers.cmake and
// expects the check to refuse it. Never compiled.
#include "config/zone_config.hpp"

#include <vector>

#include "aoi/static_grid.hpp"
#include "protocol/limits.hpp"
#include "util_helper.hpp"
