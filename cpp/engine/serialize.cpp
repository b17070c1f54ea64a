// A pool as bytes (pickling): its terms, embedded automata, string-length marks and liveness
// facts. Memo tables are rebuilt on use. load() checks every index it reads.
#include <cstring>

#include "liveness.h"
#include "string_length.h"

namespace structgen {

namespace {
constexpr uint32_t MAGIC = 0x53475031;  // "SGP1"

struct WitnessEntry {  // (a POD: read back with memcpy)
    Id term;
    int64_t length;
};

struct Writer {
    std::string out;
    template <class T>
    void put(T v) {
        out.append(reinterpret_cast<const char*>(&v), sizeof v);
    }
    template <class T>
    void put_vec(const std::vector<T>& v) {
        put<uint64_t>(v.size());
        if (!v.empty()) out.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
    }
};

struct Reader {
    const std::string& in;
    size_t at = 0;
    template <class T>
    T get() {
        if (in.size() - at < sizeof(T)) throw InvalidArgument("a pickled pool is cut short");
        T v;
        std::memcpy(&v, in.data() + at, sizeof v);
        at += sizeof v;
        return v;
    }
    template <class T>
    std::vector<T> get_vec() {
        uint64_t n = get<uint64_t>();
        if (n > (in.size() - at) / sizeof(T)) throw InvalidArgument("a pickled pool is cut short");
        std::vector<T> v(n);
        if (n) std::memcpy(v.data(), in.data() + at, n * sizeof(T));
        at += n * sizeof(T);
        return v;
    }
};
}  // namespace

std::string Pool::dump() const {
    Writer w;
    w.put(MAGIC);
    w.put<uint64_t>(embedded_.size());
    for (const auto& emb : embedded_) {
        w.put_vec(emb->rows());
        w.put_vec(emb->finals());
        for (int32_t q = 0; q < emb->num_states(); ++q) w.put_vec(emb->symbols(q));
        w.put_vec(emb->column_classes());
        w.put<uint8_t>(emb->regex.has_value());
        if (emb->regex) w.put_vec(std::vector<char>(emb->regex->begin(), emb->regex->end()));
    }
    w.put_vec(nodes_);
    w.put_vec(masks_);
    w.put_vec(members_);
    w.put_vec(nullable_);
    w.put_vec(algebraic_);
    w.put<int64_t>(lengths_->quote() ? static_cast<int64_t>(*lengths_->quote()) : -1);
    w.put_vec(std::vector<Id>(lengths_->units().begin(), lengths_->units().end()));
    std::vector<WitnessEntry> witness;
    for (auto [x, length] : search_->witness) witness.push_back({x, length});
    w.put_vec(witness);
    w.put_vec(std::vector<Id>(search_->gave_up.begin(), search_->gave_up.end()));
    w.put_vec(std::vector<Id>(search_->alive.begin(), search_->alive.end()));
    return w.out;
}

void Pool::load(const std::string& data) {
    Reader r{data};
    if (r.get<uint32_t>() != MAGIC) throw InvalidArgument("not a pickled expression pool");
    uint64_t num_embedded = r.get<uint64_t>();
    std::vector<std::shared_ptr<EmbeddedDfa>> embedded;
    for (uint64_t i = 0; i < num_embedded; ++i) {
        auto rows = r.get_vec<int32_t>();
        auto finals = r.get_vec<uint8_t>();
        std::vector<std::vector<SymbolEdge>> symbols;
        for (size_t q = 0; q < finals.size(); ++q) symbols.push_back(r.get_vec<SymbolEdge>());
        auto columns = r.get_vec<ByteSet>();
        auto emb = std::make_shared<EmbeddedDfa>(std::move(rows), std::move(finals), std::move(symbols), std::move(columns));
        if (r.get<uint8_t>()) {
            auto text = r.get_vec<char>();
            emb->regex = std::string(text.begin(), text.end());
        }
        embedded.push_back(std::move(emb));
    }
    auto nodes = r.get_vec<Node>();
    auto masks = r.get_vec<ByteSet>();
    auto members = r.get_vec<Id>();
    auto nullable = r.get_vec<uint8_t>();
    auto algebraic = r.get_vec<uint8_t>();
    if (nodes.size() < 2 || nullable.size() != nodes.size() || algebraic.size() != nodes.size() || nodes.size() >= MAX_TERMS)
        throw InvalidArgument("a pickled pool's tables disagree");
    for (size_t e = 0; e < nodes.size(); ++e) {  // (parts before wholes: ids ascend as terms are built)
        const Node& n = nodes[e];
        auto below = [&](uint64_t p) {
            if (p >= e) throw InvalidArgument("a pickled pool's term refers to a later one");
        };
        switch (n.kind) {
            case Kind::Nothing:
            case Kind::Epsilon:
                if (e > 1) throw InvalidArgument("a pickled pool's tables disagree");
                break;
            case Kind::Bytes:
                if (n.a >= masks.size()) throw InvalidArgument("a pickled pool's byte set is missing");
                break;
            case Kind::Seq:
                below(n.a), below(n.b);
                break;
            case Kind::Alt:
            case Kind::And:
                if (uint64_t(n.a) + n.b > members.size()) throw InvalidArgument("a pickled pool's members are missing");
                for (uint32_t i = 0; i < n.b; ++i) below(members[n.a + i]);
                break;
            case Kind::Rep:
            case Kind::Not:
                below(n.a);
                break;
            case Kind::Sym:
                break;
            case Kind::Dfa:
                if (n.a >= embedded.size() || n.b >= static_cast<uint32_t>(embedded[n.a]->num_states()))
                    throw InvalidArgument("a pickled pool's embedded automaton is missing");
                break;
            default:
                throw InvalidArgument("a pickled pool holds an unknown kind of term");
        }
    }
    Pool fresh;  // (reset everything, then take the tables)
    fork_from(fresh);
    embedded_ = std::move(embedded);
    nodes_ = std::move(nodes);
    masks_ = std::move(masks);
    members_ = std::move(members);
    nullable_ = std::move(nullable);
    algebraic_ = std::move(algebraic);
    size_.clear(), counter_.clear(), lower_.clear(), symbols_.clear();
    symsets_ = SymbolSets();
    for (Id e = 0; e < nodes_.size(); ++e) note(e);
    table_.assign(1024, 0);
    while (table_.size() < 2 * nodes_.size()) table_.resize(table_.size() * 2);
    table_.assign(table_.size() / 2, 0);
    rehash();
    one_byte_.fill(-1);
    for (Id e = 0; e < nodes_.size(); ++e)
        if (nodes_[e].kind == Kind::Bytes && masks_[nodes_[e].a].count() == 1) one_byte_[masks_[nodes_[e].a].lowest()] = e;
    anything_ = repeat(bytes_of(ByteSet::all()), 0, -1);
    int64_t quote = r.get<int64_t>();
    auto units = r.get_vec<Id>();
    if (quote >= 0) {
        check(quote);
        for (Id u : units) {
            check(u);
            lengths_->mark(u, static_cast<Id>(quote));
        }
    }
    for (auto [x, length] : r.get_vec<WitnessEntry>()) {
        check(x);
        search_->witness[x] = length;
    }
    for (Id x : r.get_vec<Id>()) check(x), search_->gave_up.insert(x);
    for (Id x : r.get_vec<Id>()) check(x), search_->alive.insert(x);
}

}  // namespace structgen
