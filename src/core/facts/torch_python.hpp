// Which Python interpreter a PyTorch installation belongs to (newcomer review, findings 6 and
// 29: detect found torch but never said for which `python`, so `probe` ran one without it).
#pragma once

#include <string>
#include <string_view>

namespace rmcp {

// The interpreter that imports the torch package at `torch_dir` (TorchInstall::path), from
// where the package sits (site-packages layouts of Debian, other distributions, pip --user,
// venv and conda; TorchInstall::origin):
//   /usr/lib/python3/dist-packages/torch                 → /usr/bin/python3
//   /usr/local/lib/python3.X/dist-packages/torch         → /usr/bin/python3.X  (Debian's pip)
//   /usr/lib/python3.X/site-packages/torch               → /usr/bin/python3.X
//   /usr/local/lib/python3.X/site-packages/torch         → /usr/local/bin/python3.X
//   ~/.local/lib/python3.X/site-packages/torch (user)    → /usr/bin/python3.X
//   PREFIX/lib/python3.X/site-packages/torch (venv, conda) → PREFIX/bin/python3.X
// "" when the path has none of these shapes. A logical path (inside --root): the caller checks
// that it exists where it runs it.
std::string torch_python(std::string_view torch_dir, std::string_view origin);

}  // namespace rmcp
