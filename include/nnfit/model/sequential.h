// Sequential lives with Model (model.h); this header remains for its includers.
#pragma once
#include "nnfit/model/model.h"
