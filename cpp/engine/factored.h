// An alternation of words as a trie of them: factored(pool, parts) is the alternation of parts with
// the byte sets they begin with taken out, recursively (b·x | b·y = b·(x | y)). The same language,
// but a derivative of it reads only the options that go on with the byte read, where that of a plain
// alternation derives every option (an enum of 600 time zones). (Python face:
// automata/expr_rewrite.py's factored, used for enumerations.)
#pragma once
#include <span>

#include "pool.h"

namespace structgen {

// How many leading byte sets are taken out at most (each one a level of recursion).
constexpr int FACTOR_DEPTH = 48;

Id factored(Pool& pool, std::span<const Id> parts, int depth = 0);

}  // namespace structgen
