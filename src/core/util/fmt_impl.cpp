// fmt's compiled part, built into librmcp when RMCP_STATIC_DEPS is on (cmake/Dependencies.cmake).
//
// Debian ships fmt as headers plus a shared library only. Linking that library would load
// libstdc++.so on every start of rmcp (~1 ms, docs/PERFORMANCE.md "Start-up"); using fmt
// header-only would compile its formatting core into every source file (builds ~25 %
// slower). So the out-of-line definitions the headers declare (fmt/format-inl.h) are
// compiled here, once, with the explicit instantiations the headers declare `extern`.
#ifdef RMCP_FMT_COMPILED_IN

#include <fmt/format-inl.h>

FMT_BEGIN_NAMESPACE
namespace detail {

template auto thousands_sep_impl<char>(locale_ref) -> thousands_sep_result<char>;
template auto decimal_point_impl(locale_ref) -> char;

}  // namespace detail
FMT_END_NAMESPACE

#endif
