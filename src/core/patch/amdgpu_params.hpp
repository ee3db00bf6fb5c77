// The amdgpu module parameters a patch may set, and the values each accepts.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rmcp::patch {

// The amdgpu module parameters rmcp may write (docs/domain.md "amdgpu module parameters";
// Linux drivers/gpu/drm/amd/amdgpu/amdgpu_drv.c) and whether `value` is valid for `name`.
// An empty optional means valid; otherwise the reason.
std::optional<std::string> check_amdgpu_parameter(std::string_view name, std::string_view value);
std::vector<std::string_view> known_amdgpu_parameters();

}  // namespace rmcp::patch
