#include "liveness.h"

#include <algorithm>
#include <queue>

#include "string_length.h"

namespace structgen {

bool Pool::is_live(Id e) {
    if (e == NOTHING) return false;
    if (!algebraic_[e]) return true;
    auto got = search_->liveness(e);
    return got.has_value() && *got;
}

std::optional<bool> Liveness::liveness(Id e, int64_t limit) {
    if (e == NOTHING) return false;
    if (auto w = witness.find(e); w != witness.end() && w->second >= INF) {
        if (gave_up.count(e)) return std::nullopt;
        return false;
    }
    if (auto v = verdict(e)) return v;
    if (guessed(e)) {
        alive.insert(e);
        return true;
    }
    if (relaxed_is_dead(e, limit)) {
        witness[e] = INF;
        return false;
    }
    // best-first: the smallest lower bound first (towards the end of a string), ties by age
    std::unordered_map<Id, int64_t> parent{{e, -1}};
    using Item = std::tuple<int64_t, int64_t, Id>;
    std::priority_queue<Item, std::vector<Item>, std::greater<Item>> heap;
    heap.emplace(pool_.lower(e), 0, e);
    std::vector<Id> path;
    while (!heap.empty()) {
        Id x = std::get<2>(heap.top());
        heap.pop();
        auto visit = [&](Id d) -> bool {  // true: a witness found
            if (d == NOTHING || parent.count(d)) return false;
            if (auto w = witness.find(d); w != witness.end() && w->second >= INF) return false;
            parent.emplace(d, x);
            auto v = verdict(d);
            if (v.has_value() && *v) {
                for (int64_t y = x; y >= 0; y = parent[static_cast<Id>(y)]) alive.insert(static_cast<Id>(y));
                return true;
            }
            if (v.has_value()) return false;
            heap.emplace(pool_.lower(d), static_cast<int64_t>(parent.size()), d);
            return false;
        };
        const std::vector<ByteSet> classes = pool_.byte_classes(x);
        for (const ByteSet& m : classes)
            if (visit(pool_.derive(x, m.lowest()))) return true;
        const std::vector<int64_t> ks = pool_.symbol_sets().get(pool_.first_symbols(x));
        for (int64_t k : ks)
            if (visit(pool_.derive_symbol(x, k))) return true;
        if (static_cast<int64_t>(parent.size()) > limit) {
            witness[e] = INF;
            gave_up.insert(e);
            return std::nullopt;
        }
    }
    for (auto& [y, _] : parent) witness[y] = INF;
    return false;
}

bool Liveness::relaxed_is_dead(Id e, int64_t limit) {
    Id r = relaxed(e);
    if (r == e) return false;
    if (auto w = witness.find(r); w != witness.end() && w->second >= INF && !gave_up.count(r)) return true;
    if (!liveness(r, limit / 4).has_value()) {  // (gave up on the superset: forgotten, e is searched)
        witness.erase(r);
        gave_up.erase(r);
        return false;
    }
    auto w = witness.find(r);
    return w != witness.end() && w->second >= INF;
}

Id Liveness::relaxed(Id e) {
    if (auto it = relax_.find(e); it != relax_.end()) return it->second;
    DepthGuard guard(pool_.depth);
    const Node n = pool_.node(e);
    Id got = e;
    if ((!pool_.algebraic(e) && pool_.counter(e) <= RELAXED_COUNTER) || n.kind == Kind::Not) {
        got = e;
    } else if (n.kind == Kind::Seq) {
        std::vector<Id> heads;
        Id x = e;
        while (pool_.kind(x) == Kind::Seq) {
            heads.push_back(pool_.node(x).a);
            x = pool_.node(x).b;
        }
        got = relaxed(x);
        for (size_t i = heads.size(); i-- > 0;) got = pool_.seq(relaxed(heads[i]), got);
    } else if (n.kind == Kind::Alt || n.kind == Kind::And) {
        auto ms = pool_.members(e);
        std::vector<Id> parts(ms.begin(), ms.end());
        for (Id& p : parts) p = relaxed(p);
        got = n.kind == Kind::Alt ? pool_.alt(parts) : pool_.both(parts);
    } else if (n.kind == Kind::Rep) {
        Id x = relaxed(n.a);
        if (n.c > RELAXED_COUNTER || n.d > RELAXED_COUNTER)
            got = pool_.repeat(x, std::min<int64_t>(n.c, 1), -1);
        else
            got = pool_.repeat(x, n.c, n.d);
    }
    relax_[e] = got;
    return got;
}

std::optional<bool> Liveness::known(Id x) {
    if (!pool_.algebraic(x) || pool_.nullable(x) || alive.count(x)) return true;
    if (auto w = witness.find(x); w != witness.end()) return w->second < INF;
    return std::nullopt;
}

void Liveness::remember(Id x, std::optional<bool> got) {
    if (!got.has_value()) return;
    if (*got)
        alive.insert(x);
    else
        witness[x] = INF;
}

std::optional<bool> Liveness::verdict(Id x) {
    if (auto k = known(x)) return k;
    if (pool_.kind(x) != Kind::Seq) return verdict_one(x);
    // a chain of concatenations, in a loop (a long one is deep): each link by its head and the
    // rest, the heads read first to last, then the links decided back from the end
    std::vector<Id> links;
    std::vector<std::optional<bool>> heads;
    Id y = x;
    std::optional<bool> last;
    while (true) {
        if (auto k = known(y)) {
            last = k;
            break;
        }
        if (pool_.kind(y) != Kind::Seq) {
            last = verdict_one(y);
            break;
        }
        links.push_back(y);
        heads.push_back(verdict(pool_.node(y).a));
        y = pool_.node(y).b;
    }
    for (size_t i = links.size(); i-- > 0;) {
        const auto& h = heads[i];
        std::optional<bool> got;
        if ((h.has_value() && !*h) || (last.has_value() && !*last))
            got = false;
        else if (!h.has_value() || !last.has_value())
            got = std::nullopt;
        else
            got = true;
        remember(links[i], got);
        last = got;
    }
    return last;
}

std::optional<bool> Liveness::verdict_one(Id x) {
    DepthGuard guard(pool_.depth);
    const Node n = pool_.node(x);
    std::optional<bool> got;
    if (n.kind == Kind::Alt) {
        auto ms = pool_.members(x);
        std::vector<Id> parts(ms.begin(), ms.end());
        bool any_true = false, any_unknown = false;
        for (Id p : parts) {  // (every member is read: their verdicts are remembered)
            auto v = verdict(p);
            if (!v.has_value())
                any_unknown = true;
            else if (*v)
                any_true = true;
        }
        got = any_true ? std::optional<bool>(true) : any_unknown ? std::nullopt : std::optional<bool>(false);
    } else if (n.kind == Kind::Rep) {
        got = n.c == 0 ? std::optional<bool>(true) : verdict(n.a);
    } else {
        got = pool_.string_lengths().verdict(x);
    }
    remember(x, got);
    return got;
}

bool Liveness::guessed(Id e) {
    std::vector<std::string> texts;
    try {
        texts = guesses(e);
    } catch (const BudgetExceeded&) {  // (a term too deep to guess at: searched instead)
        return false;
    }
    for (const std::string& text : texts) {
        Id x = e;
        for (unsigned char b : text) {
            x = pool_.derive(x, b);
            if (x == NOTHING) break;
        }
        if (x != NOTHING && pool_.nullable(x)) return true;
    }
    return false;
}

const std::vector<std::string>& Liveness::guesses(Id e) {
    if (auto it = guess_texts_.find(e); it != guess_texts_.end()) return it->second;
    DepthGuard guard(pool_.depth);
    const Node n = pool_.node(e);
    std::vector<std::string> out;
    auto by_lower = [&](std::vector<Id> parts, bool reverse) {
        std::stable_sort(parts.begin(), parts.end(), [&](Id a, Id b) {
            return reverse ? pool_.lower(a) > pool_.lower(b) : pool_.lower(a) < pool_.lower(b);
        });
        return parts;
    };
    if (!pool_.algebraic(e) && ((n.kind != Kind::Seq && n.kind != Kind::Alt) || pool_.lower(e) > GUESSED_LENGTH)) {
        const auto& first = shortest_text(e);
        if (first) out.push_back(*first);
    } else if (n.kind == Kind::Seq) {
        std::vector<std::string> heads = guesses(n.a);
        std::vector<std::string> tails = guesses(n.b);
        if (!heads.empty() && !tails.empty()) {
            for (const auto& t : tails) out.push_back(heads[0] + t);
            for (size_t i = 1; i < heads.size(); ++i) out.push_back(heads[i] + tails[0]);
        }
    } else if (n.kind == Kind::Alt) {
        auto ms = pool_.members(e);
        for (Id p : by_lower({ms.begin(), ms.end()}, false)) {
            const auto& more = guesses(p);
            out.insert(out.end(), more.begin(), more.end());
            if (out.size() >= GUESSES) break;
        }
    } else if (n.kind == Kind::Rep) {
        std::vector<std::string> ones = guesses(n.a);
        for (const auto& one : ones) {
            if (!one.empty() && static_cast<uint64_t>(n.c) > MAX_GUESS_BYTES / one.size()) continue;
            std::string s;
            for (int64_t i = 0; i < n.c; ++i) s += one;
            out.push_back(std::move(s));
        }
    } else if (n.kind == Kind::And) {
        auto ms = pool_.members(e);
        for (Id p : by_lower({ms.begin(), ms.end()}, true)) {
            out = guesses(p);
            if (!out.empty()) break;
        }
    }
    std::vector<std::string> distinct;
    for (auto& s : out) {
        if (distinct.size() >= GUESSES) break;
        if (std::find(distinct.begin(), distinct.end(), s) == distinct.end()) distinct.push_back(std::move(s));
    }
    return guess_texts_[e] = std::move(distinct);
}

const std::optional<std::string>& Liveness::shortest_text(Id e) {
    if (auto it = texts_.find(e); it != texts_.end()) return it->second;
    DepthGuard guard(pool_.depth);
    std::optional<std::string> got;
    if (!pool_.algebraic(e) && pool_.lower(e) <= WITNESS_LENGTH) {
        const Node n = pool_.node(e);
        switch (n.kind) {
            case Kind::Epsilon:
                got = std::string();
                break;
            case Kind::Bytes:
                got = std::string(1, static_cast<char>(pool_.mask(e).lowest()));
                break;
            case Kind::Seq: {
                auto head = shortest_text(n.a);
                if (head) {
                    const auto& tail = shortest_text(n.b);
                    if (tail) got = *head + *tail;
                }
                break;
            }
            case Kind::Alt: {
                auto ms = pool_.members(e);
                std::vector<Id> parts(ms.begin(), ms.end());
                std::stable_sort(parts.begin(), parts.end(), [&](Id a, Id b) { return pool_.lower(a) < pool_.lower(b); });
                for (Id p : parts) {
                    got = shortest_text(p);
                    if (got) break;
                }
                break;
            }
            case Kind::Rep: {
                auto one = shortest_text(n.a);
                if (one && (one->empty() || static_cast<uint64_t>(n.c) <= MAX_GUESS_BYTES / one->size())) {
                    std::string s;
                    for (int64_t i = 0; i < n.c; ++i) s += *one;
                    got = std::move(s);
                }
                break;
            }
            case Kind::Dfa:
                got = dfa_text(n.a, static_cast<int32_t>(n.b));
                break;
            default:
                break;
        }
    }
    return texts_[e] = std::move(got);
}

std::optional<std::string> Liveness::dfa_text(uint32_t index, int32_t q) {
    EmbeddedDfa& emb = pool_.embedded(index);
    if (emb.has_symbols()) return std::nullopt;
    const std::vector<int64_t>& lengths = emb.min_lengths({});
    if (lengths[q] >= INF) return std::nullopt;
    std::string out;
    while (lengths[q]) {
        int b = 0;
        while (!(emb.at(q, b) >= 0 && lengths[emb.at(q, b)] == lengths[q] - 1)) ++b;
        out.push_back(static_cast<char>(b));
        q = emb.at(q, b);
    }
    return out;
}

int64_t Liveness::witness_length(Id e, int64_t limit) {
    if (auto w = witness.find(e); w != witness.end()) return w->second;
    std::unordered_map<Id, int64_t> parent{{e, -1}};
    std::vector<Id> frontier{e};
    int64_t depth = 0, best = INF;
    int64_t found = -1;
    while (!frontier.empty() && depth < best) {
        std::vector<Id> next;
        for (Id x : frontier) {
            std::optional<int64_t> known;
            if (pool_.nullable(x))
                known = 0;
            else if (auto w = witness.find(x); w != witness.end())
                known = w->second;
            if (known) {
                if (depth + *known < best) {
                    best = depth + *known;
                    found = x;
                }
                continue;
            }
            auto add = [&](Id d) {
                if (d != NOTHING && !parent.count(d)) {
                    parent.emplace(d, x);
                    next.push_back(d);
                }
            };
            const std::vector<ByteSet> classes = pool_.byte_classes(x);
            for (const ByteSet& m : classes) add(pool_.derive(x, m.lowest()));
            const std::vector<int64_t> ks = pool_.symbol_sets().get(pool_.first_symbols(x));
            for (int64_t k : ks) add(pool_.derive_symbol(x, k));
            if (static_cast<int64_t>(parent.size()) > limit) {
                witness[e] = INF;
                gave_up.insert(e);
                return INF;
            }
        }
        frontier.swap(next);
        ++depth;
    }
    if (found < 0) {
        for (auto& [x, _] : parent) witness[x] = INF;
        return INF;
    }
    std::vector<Id> path{static_cast<Id>(found)};
    while (parent[path.back()] >= 0) path.push_back(static_cast<Id>(parent[path.back()]));
    int64_t length = best - static_cast<int64_t>(path.size() - 1);
    for (Id x : path) {
        auto w = witness.find(x);
        if (w == witness.end() || w->second > length) witness[x] = length;
        ++length;
    }
    return witness[e];
}

}  // namespace structgen
