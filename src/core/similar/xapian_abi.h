/* The C interface of librmcp_xapian.so (src/xapian/xapian_module.cpp): the only code of rmcp that talks to Xapian (src/core/similar/index.hpp).
 *
 * rmcp links libstdc++ and libgcc statically for its start-up time (cmake/Dependencies.cmake),
 * and Xapian is a C++ library that throws its own exceptions: linked into rmcp, every command
 * would load libxapian and a second C++ runtime, and an exception would cross two unwinders.
 * So Xapian lives in this module, opened with dlopen() on the first lookup only, behind a C
 * interface of JSON text in and JSON text out: no C++ object and no exception crosses it.
 *
 * Requests (one JSON object each; every answer is an object, {"error": "..."} on failure):
 *   {"op": "build", "path": DIR, "metadata": {KEY: TEXT...},
 *    "docs": [{"id": TEXT, "terms": [TERM...], "data": TEXT}...]}
 *       writes a new index at DIR (DIR must not exist) -> {"documents": N}
 *   {"op": "metadata", "path": DIR, "key": KEY}            -> {"value": TEXT}
 *   {"op": "search", "path": DIR, "terms": [TERM...], "limit": N, "exclude": [ID...]}
 *       BM25 over the terms (OR), leaving out the documents with those ids ->
 *       {"documents": N, "hits": [{"id", "data", "weight", "terms": [TERM...]}],
 *        "term_frequency": {TERM: DOCUMENTS...}}   (for every query and hit term)
 */
#ifndef RMCP_SIMILAR_XAPIAN_ABI_H
#define RMCP_SIMILAR_XAPIAN_ABI_H

#ifdef __cplusplus
extern "C" {
#endif

/* The module is built with hidden visibility; these three are its only exports. */
#define RMCP_XAPIAN_EXPORT __attribute__((visibility("default")))

/* Version of this interface: the core refuses a module of another. */
#define RMCP_XAPIAN_ABI 1
RMCP_XAPIAN_EXPORT int rmcp_xapian_abi(void);
/* Answers one request; the answer is allocated with malloc() and freed with rmcp_xapian_free(). */
RMCP_XAPIAN_EXPORT char* rmcp_xapian_call(const char* request_json);
RMCP_XAPIAN_EXPORT void rmcp_xapian_free(char* answer);

#ifdef __cplusplus
}
#endif

#endif
