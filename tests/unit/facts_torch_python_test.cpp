// Which interpreter a PyTorch installation belongs to (facts/torch_python.hpp; newcomer review,
// findings 6 and 29): every site-packages layout detect looks in.
#include "facts/torch_python.hpp"

#include <gtest/gtest.h>

namespace rmcp {
namespace {

TEST(TorchPython, EachLayoutDetectReadsNamesItsInterpreter) {
    EXPECT_EQ(torch_python("/usr/lib/python3/dist-packages/torch", "debian"), "/usr/bin/python3");
    EXPECT_EQ(torch_python("/usr/local/lib/python3.11/dist-packages/torch", "system"), "/usr/bin/python3.11");
    EXPECT_EQ(torch_python("/usr/lib/python3.12/site-packages/torch", "system"), "/usr/bin/python3.12");
    EXPECT_EQ(torch_python("/usr/local/lib/python3.12/site-packages/torch", "system"), "/usr/local/bin/python3.12");
    EXPECT_EQ(torch_python("/home/u/.local/lib/python3.11/site-packages/torch", "user"), "/usr/bin/python3.11");
    EXPECT_EQ(torch_python("/home/u/venv/lib/python3.12/site-packages/torch", "venv"), "/home/u/venv/bin/python3.12");
    EXPECT_EQ(torch_python("/opt/conda/envs/t/lib/python3.10/site-packages/torch", "conda"),
              "/opt/conda/envs/t/bin/python3.10");
}

TEST(TorchPython, OtherShapesNameNone) {
    EXPECT_EQ(torch_python("/opt/torch", "system"), "");
    EXPECT_EQ(torch_python("/usr/lib/python2.7/site-packages/torch", "system"), "");
    EXPECT_EQ(torch_python("/usr/lib/python3.11/elsewhere/torch", "system"), "");
    EXPECT_EQ(torch_python("torch", "venv"), "");
}

}  // namespace
}  // namespace rmcp
