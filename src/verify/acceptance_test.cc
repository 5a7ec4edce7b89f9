#include "verify/acceptance.h"

#include <gtest/gtest.h>
