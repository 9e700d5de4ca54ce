// The native module's parts kept in files of their own (module.cpp registers them all): each
// registers its functions and option types on the module.
#pragma once
#include <pybind11/pybind11.h>

namespace hybridsim::python {

// plan(): the 2017 networks' planner and the transformer planner (module_plan.cpp).
void register_plan(pybind11::module_& m);

}  // namespace hybridsim::python
