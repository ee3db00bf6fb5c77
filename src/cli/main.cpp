// rmcp's entry point: parse, then hand over to the command that was chosen.
#include "context.hpp"

#include <fmt/core.h>

namespace rmcp::cli {
int run(int argc, char** argv);
}

int main(int argc, char** argv) { return rmcp::cli::run(argc, argv); }
