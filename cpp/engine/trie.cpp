#include "trie.h"

#include <algorithm>
#include <utility>

#include "errors.h"

namespace structgen {

std::shared_ptr<TokenTrie> TokenTrie::build(const std::vector<std::string>& tokens, std::span<const int64_t> ids) {
    // the tokens sorted by their bytes: a depth-first build where each token shares the nodes of
    // its longest common prefix with the one before (the nodes come out in preorder, which is the
    // lexicographic order of their prefixes)
    std::vector<std::pair<std::string_view, int64_t>> sorted;
    sorted.reserve(ids.size());
    for (size_t i = 0; i < ids.size(); ++i) {
        const int64_t id = ids[i];
        if (id < 0 || static_cast<size_t>(id) >= tokens.size()) throw OutOfRange("no token " + std::to_string(id));
        if (tokens[id].empty()) throw InvalidArgument("token " + std::to_string(id) + " has no bytes to walk");
        sorted.emplace_back(tokens[id], static_cast<int64_t>(i));
    }
    std::stable_sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<uint8_t> dbyte{0};
    std::vector<int32_t> dparent{0}, ddepth{0};
    std::vector<int32_t> path{0};  // the nodes of the previous token's prefixes, by depth
    std::vector<int32_t> ends(ids.size());  // per position in ids: the preorder node its token ends at
    std::string_view prev;
    for (const auto& [tok, at] : sorted) {
        size_t common = 0;
        const size_t most = std::min(prev.size(), tok.size());
        while (common < most && prev[common] == tok[common]) ++common;
        path.resize(common + 1);
        for (size_t d = common; d < tok.size(); ++d) {
            if (dbyte.size() >= (size_t(1) << 31) - 1) throw BudgetExceeded("nodes of a token trie", (int64_t(1) << 31) - 1);
            const int32_t node = static_cast<int32_t>(dbyte.size());
            dbyte.push_back(static_cast<uint8_t>(tok[d]));
            dparent.push_back(path.back());
            ddepth.push_back(static_cast<int32_t>(d + 1));
            path.push_back(node);
        }
        ends[at] = path.back();
        prev = tok;
    }
    // breadth-first order: the preorder, stably sorted by depth (a counting sort)
    const size_t n = dbyte.size();
    int32_t deepest = 0;
    for (int32_t d : ddepth) deepest = std::max(deepest, d);
    std::vector<int64_t> starts(static_cast<size_t>(deepest) + 2, 0);
    for (int32_t d : ddepth) ++starts[static_cast<size_t>(d) + 1];
    for (size_t d = 1; d < starts.size(); ++d) starts[d] += starts[d - 1];
    std::vector<int32_t> renumber(n);
    for (size_t i = 0; i < n; ++i) renumber[i] = static_cast<int32_t>(starts[ddepth[i]]++);
    std::vector<uint8_t> byte(n);
    std::vector<int32_t> parent(n);
    for (size_t i = 0; i < n; ++i) {
        byte[renumber[i]] = dbyte[i];
        parent[renumber[i]] = renumber[dparent[i]];
    }
    parent[0] = 0;
    std::vector<int64_t> token_ids(ids.begin(), ids.end()), token_nodes(ids.size());
    for (size_t i = 0; i < ids.size(); ++i) token_nodes[i] = renumber[ends[i]];
    return assemble(std::move(byte), std::move(parent), std::move(token_ids), std::move(token_nodes), {});
}

std::shared_ptr<TokenTrie> TokenTrie::assemble(std::vector<uint8_t> byte, std::vector<int32_t> parent,
                                               std::vector<int64_t> token_ids, std::vector<int64_t> token_nodes,
                                               std::vector<int64_t> origin) {
    auto t = std::make_shared<TokenTrie>();
    const size_t n = byte.size();
    t->byte = std::move(byte);
    t->parent = std::move(parent);
    t->token_ids = std::move(token_ids);
    t->token_nodes = std::move(token_nodes);
    t->origin = std::move(origin);
    t->num_children.assign(n, 0);
    for (size_t i = 1; i < n; ++i) ++t->num_children[t->parent[i]];
    // the children of p are the nodes whose parent is p, contiguous (parents ascend in this order);
    // a leaf's first_child is where its children would be (as numpy's searchsorted puts it)
    t->first_child.assign(n, 0);
    size_t i = 1;
    for (size_t p = 0; p < n; ++p) {
        while (i < n && static_cast<size_t>(t->parent[i]) < p) ++i;
        t->first_child[p] = static_cast<int32_t>(i);
    }
    t->derive();
    return t;
}

void TokenTrie::derive() {
    const size_t n = byte.size();
    tok_count.assign(n, 0);
    for (int64_t node : token_nodes) ++tok_count[node];
    tok_first.assign(n, 0);
    for (size_t i = 1; i < n; ++i) tok_first[i] = tok_first[i - 1] + tok_count[i - 1];
    tok_ids.assign(token_ids.size(), 0);
    {
        std::vector<int64_t> at(tok_first);
        for (size_t j = 0; j < token_ids.size(); ++j) tok_ids[at[token_nodes[j]]++] = token_ids[j];
    }
    bool single = true;
    for (int64_t c : tok_count) single = single && c <= 1;
    node_token.clear();
    if (single) {
        node_token.assign(n, -1);
        for (size_t j = 0; j < token_ids.size(); ++j) node_token[token_nodes[j]] = token_ids[j];
    }
    std::vector<int32_t> depth(n, 0);
    int32_t deepest = 0;
    for (size_t i = 1; i < n; ++i) deepest = std::max(deepest, depth[i] = depth[parent[i]] + 1);
    depth_starts.assign(static_cast<size_t>(deepest) + 2, static_cast<int64_t>(n));
    for (size_t i = n; i-- > 0;) depth_starts[depth[i]] = static_cast<int64_t>(i);
    depth_starts[0] = 0;
    height.assign(n, 0);
    for (size_t i = n; i-- > 1;) height[parent[i]] = std::max(height[parent[i]], height[i] + 1);
    if (deepest > UINT16_MAX) throw BudgetExceeded("bytes of a token", UINT16_MAX);
    max_depth = deepest;
    // preorder: depth first with an explicit stack, children pushed last byte first
    pre.assign(n + 1, PreNode{0, 0, 0, 0, 0});
    pre_of.assign(n, 0);
    pre_tok_ids.clear();
    pre_tok_ids.reserve(token_ids.size());
    std::vector<int32_t> todo{0};
    int32_t at = 0;
    while (!todo.empty()) {
        const int32_t v = todo.back();
        todo.pop_back();
        pre[at] = PreNode{0, v, static_cast<int32_t>(pre_tok_ids.size()), static_cast<uint16_t>(depth[v]), byte[v]};
        pre_of[v] = at;
        for (int64_t id : tokens_at(v)) pre_tok_ids.push_back(id);
        ++at;
        for (int32_t c = first_child[v] + num_children[v]; c-- > first_child[v];) todo.push_back(c);
    }
    pre[n].end = pre[n].node = static_cast<int32_t>(n);
    pre[n].tok_first = static_cast<int32_t>(pre_tok_ids.size());
    pre_tok_ids.push_back(-1);  // (a sentinel past the last node's tokens: see TokenSink)
    // a subtree ends where it began plus its size (sizes summed bottom up, breadth first reversed)
    std::vector<int32_t> size(n, 1);
    for (size_t i = n; i-- > 1;) size[parent[i]] += size[i];
    for (size_t p = 0; p < n; ++p) pre[p].end = static_cast<int32_t>(p) + size[pre[p].node];
}

std::shared_ptr<TokenTrie> TokenTrie::restrict(std::span<const int64_t> ids) const {
    int64_t top = -1;
    for (int64_t id : token_ids) top = std::max(top, id);
    std::vector<int64_t> where(static_cast<size_t>(top + 1), -1);
    for (size_t j = 0; j < token_ids.size(); ++j) where[token_ids[j]] = static_cast<int64_t>(j);
    std::vector<uint8_t> keep(byte.size(), 0);
    keep[0] = 1;
    std::vector<int64_t> pos(ids.size());
    for (size_t i = 0; i < ids.size(); ++i) {
        const int64_t id = ids[i];
        if (id < 0 || id > top || where[id] < 0) throw InvalidArgument("restrict() needs tokens of this trie");
        pos[i] = where[id];
        for (int64_t node = token_nodes[pos[i]]; !keep[node]; node = parent[node]) keep[node] = 1;
    }
    std::vector<int32_t> new_id(byte.size(), -1);
    std::vector<int64_t> old;
    for (size_t i = 0; i < byte.size(); ++i)
        if (keep[i]) {
            new_id[i] = static_cast<int32_t>(old.size());
            old.push_back(static_cast<int64_t>(i));
        }
    std::vector<uint8_t> b(old.size());
    std::vector<int32_t> p(old.size());
    for (size_t i = 0; i < old.size(); ++i) {
        b[i] = byte[old[i]];
        p[i] = new_id[parent[old[i]]];
    }
    p[0] = 0;
    std::vector<int64_t> ids_out(ids.size()), nodes_out(ids.size());
    for (size_t i = 0; i < ids.size(); ++i) {
        ids_out[i] = token_ids[pos[i]];
        nodes_out[i] = new_id[token_nodes[pos[i]]];
    }
    return assemble(std::move(b), std::move(p), std::move(ids_out), std::move(nodes_out), std::move(old));
}

int32_t TokenTrie::child(int32_t n, int b) const {
    if (n < 0 || n >= num_nodes() || !num_children[n]) return -1;
    const uint8_t* lo = byte.data() + first_child[n];
    const uint8_t* hi = lo + num_children[n];
    const uint8_t* at = std::lower_bound(lo, hi, static_cast<uint8_t>(b));
    return at != hi && *at == b ? static_cast<int32_t>(at - byte.data()) : -1;
}

int32_t TokenTrie::node_of(std::string_view data) const {
    int32_t n = 0;
    for (char c : data) {
        n = child(n, static_cast<uint8_t>(c));
        if (n < 0) return -1;
    }
    return n;
}

std::string TokenTrie::bytes_between(int32_t top, int32_t n) const {
    std::string out;
    while (n != top && n > 0) {
        out.push_back(static_cast<char>(byte[n]));
        n = parent[n];
    }
    if (n != top) throw InvalidArgument("bytes_between() needs a node below the other");
    std::reverse(out.begin(), out.end());
    return out;
}

int32_t TokenTrie::depth_of(int32_t n) const {
    return static_cast<int32_t>(std::upper_bound(depth_starts.begin(), depth_starts.end(), n) - depth_starts.begin()) - 1;
}

size_t TokenTrie::memory_bytes() const {
    return byte.size() * (1 + 4 * 3 + 8 * 3) + byte.size() * (sizeof(PreNode) + 4) + (token_ids.size() * 4) * 8 + origin.size() * 8 + node_token.size() * 8 +
           depth_starts.size() * 8 + height.size() * 8;
}

}  // namespace structgen
