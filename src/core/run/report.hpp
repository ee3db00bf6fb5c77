// Kept for the callers that still include it by its old name; the incident report is
// run/incident.hpp.
#pragma once

#include "run/incident.hpp"
