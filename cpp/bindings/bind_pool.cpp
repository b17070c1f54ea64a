// The expression pool's Python class (structgen.automata.expr.ExprPool derives from it) and the
// embedded automata, the liveness search and shortest lengths it exposes.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <algorithm>

#include "../engine/clamp.h"
#include "../engine/code_points.h"
#include "../engine/factored.h"
#include "../engine/liveness.h"
#include "../engine/slices.h"
#include "../engine/min_length.h"
#include "../engine/string_length.h"
#include "../engine/substitute.h"
#include "casters.h"
#include "py_pool.h"

namespace structgen::py {

std::vector<Id> PyPool::ids(nb::handle parts) {
    std::vector<Id> out;
    if (PyList_Check(parts.ptr()) || PyTuple_Check(parts.ptr())) out.reserve(static_cast<size_t>(PySequence_Size(parts.ptr())));
    for (nb::handle h : parts) out.push_back(id(h));
    return out;
}

nb::object PyPool::classes(Id e) {
    uint32_t i = class_index(e);
    if (i >= class_tuples.size()) class_tuples.resize(i + 1);
    nb::object& got = class_tuples[i];
    if (!got.is_valid()) {
        const auto& list = class_list(i);
        nb::tuple t = nb::steal<nb::tuple>(PyTuple_New(static_cast<Py_ssize_t>(list.size())));
        for (size_t j = 0; j < list.size(); ++j) PyTuple_SET_ITEM(t.ptr(), j, mask_to(list[j]).release().ptr());
        got = std::move(t);
    }
    return got;
}

nb::object PyPool::symset(uint32_t id) {
    if (id >= symbol_frozensets.size()) symbol_frozensets.resize(id + 1);
    nb::object& got = symbol_frozensets[id];
    if (!got.is_valid()) {
        nb::list items;
        for (int64_t k : symbol_sets().get(id)) items.append(k);
        got = nb::steal(PyFrozenSet_New(items.ptr()));
    }
    return got;
}

nb::object PyPool::node_tuple(Id e) {
    const Node& n = node(e);
    const int k = static_cast<int>(n.kind);
    auto members_tuple = [&]() {
        auto ms = members(e);
        nb::tuple t = nb::steal<nb::tuple>(PyTuple_New(static_cast<Py_ssize_t>(ms.size())));
        for (size_t j = 0; j < ms.size(); ++j) PyTuple_SET_ITEM(t.ptr(), j, PyLong_FromUnsignedLong(ms[j]));
        return t;
    };
    switch (n.kind) {
        case Kind::Bytes:
            return nb::make_tuple(k, mask_to(mask(e)));
        case Kind::Seq:
            return nb::make_tuple(k, n.a, n.b);
        case Kind::Alt:
        case Kind::And:
            return nb::make_tuple(k, members_tuple());
        case Kind::Rep:
            return nb::make_tuple(k, n.a, n.c, n.d);
        case Kind::Sym:
            return nb::make_tuple(k, n.c);
        case Kind::Dfa:
            return nb::make_tuple(k, n.a, n.b);
        case Kind::Not:
            return nb::make_tuple(k, n.a);
        default:
            return nb::make_tuple(k);
    }
}

namespace {

std::map<int64_t, int64_t> weights_of(nb::handle weights) {
    std::map<int64_t, int64_t> out;
    for (auto [k, v] : nb::cast<nb::dict>(weights)) {
        int64_t w = PyLong_Check(v.ptr()) && _PyLong_NumBits(v.ptr()) > 62 ? INF : nb::cast<int64_t>(v);
        out[nb::cast<int64_t>(k)] = std::min(w, INF);
    }
    return out;
}

std::shared_ptr<EmbeddedDfa> make_embedded(nb::ndarray<const int32_t, nb::ndim<2>, nb::c_contig> rows,
                                           nb::ndarray<const uint8_t, nb::ndim<1>, nb::c_contig> finals, nb::dict symbols,
                                           std::optional<std::vector<nb::object>> column_classes) {
    if (rows.shape(1) != 256) throw InvalidArgument("an embedded automaton's rows have 256 transitions");
    if (rows.shape(0) != finals.shape(0)) throw InvalidArgument("an embedded automaton needs a final flag per state");
    const size_t n = rows.shape(0);
    std::vector<int32_t> table(rows.data(), rows.data() + n * 256);
    std::vector<uint8_t> fin(finals.data(), finals.data() + n);
    std::vector<std::vector<SymbolEdge>> edges(n);
    for (auto [q, es] : symbols) {
        int64_t state = nb::cast<int64_t>(q);
        if (state < 0 || static_cast<size_t>(state) >= n) throw InvalidArgument("symbols of a state the embedded automaton does not have");
        for (nb::handle edge : es) {
            nb::tuple pair = nb::cast<nb::tuple>(edge);
            if (pair.size() != 2) throw InvalidArgument("a symbol edge is (symbol, state)");
            int64_t k = nb::cast<int64_t>(pair[0]);
            int64_t r = nb::cast<int64_t>(pair[1]);
            if (k < 0 || k >= (int64_t(1) << 31) || r < 0 || static_cast<size_t>(r) >= n)
                throw InvalidArgument("a symbol edge to a state the embedded automaton does not have");
            edges[state].push_back(SymbolEdge{k, static_cast<int32_t>(r)});
        }
    }
    std::vector<ByteSet> columns;
    if (column_classes)
        for (auto& m : *column_classes) columns.push_back(mask_from(m));
    return std::make_shared<EmbeddedDfa>(std::move(table), std::move(fin), std::move(edges), std::move(columns));
}

nb::object classes_tuple(const std::vector<ByteSet>& list) {
    nb::list out;
    for (const ByteSet& m : list) out.append(mask_to(m));
    return nb::tuple(out);
}

}  // namespace

void bind_pool(nb::module_& m) {
    nb::class_<EmbeddedDfa>(m, "EmbeddedDfa", "An eager automaton as the pool reads it (see structgen.automata.embedded).")
        .def("__init__",
             [](EmbeddedDfa* self, nb::ndarray<const int32_t, nb::ndim<2>, nb::c_contig> rows,
                nb::ndarray<const uint8_t, nb::ndim<1>, nb::c_contig> finals, nb::dict symbols,
                std::optional<std::vector<nb::object>> column_classes) {
                 auto made = make_embedded(rows, finals, symbols, column_classes);
                 new (self) EmbeddedDfa(std::move(*made));
             },
             nb::arg("rows"), nb::arg("finals"), nb::arg("symbols"), nb::arg("column_classes").none() = nb::none())
        .def_prop_ro("num_states", &EmbeddedDfa::num_states)
        .def_prop_ro("rows",
                     [](nb::handle self) {
                         EmbeddedDfa& e = nb::cast<EmbeddedDfa&>(self);
                         size_t shape[2] = {static_cast<size_t>(e.num_states()), 256};
                         return nb::ndarray<nb::numpy, const int32_t, nb::ndim<2>>(e.rows().data(), 2, shape, self);
                     })
        .def_prop_ro("finals",
                     [](EmbeddedDfa& e) {
                         std::vector<bool> out(e.finals().begin(), e.finals().end());
                         return out;
                     })
        .def_prop_ro("symbols",
                     [](EmbeddedDfa& e) {
                         nb::dict out;
                         for (int32_t q = 0; q < e.num_states(); ++q) {
                             const auto& es = e.symbols(q);
                             if (es.empty()) continue;
                             nb::list items;
                             for (const auto& edge : es) items.append(nb::make_tuple(edge.symbol, edge.target));
                             out[nb::int_(q)] = nb::tuple(items);
                         }
                         return out;
                     })
        .def_prop_ro("column_classes",
                     [](EmbeddedDfa& e) {
                         nb::list out;
                         for (const ByteSet& m : e.column_classes()) out.append(mask_to(m));
                         return out;
                     })
        .def_prop_rw("regex",
                     [](EmbeddedDfa& e) -> nb::object {
                         if (!e.regex) return nb::none();
                         // (structgen's regexes hold lone surrogates as markers: UTF-8 with surrogatepass)
                         return nb::steal(PyUnicode_DecodeUTF8(e.regex->data(), static_cast<Py_ssize_t>(e.regex->size()), "surrogatepass"));
                     },
                     [](EmbeddedDfa& e, nb::handle text) {
                         if (text.is_none()) {
                             e.regex.reset();
                         } else {
                             nb::object utf8 = nb::steal(PyUnicode_AsEncodedString(text.ptr(), "utf-8", "surrogatepass"));
                             if (!utf8.is_valid()) throw nb::python_error();
                             e.regex = std::string(PyBytes_AsString(utf8.ptr()), static_cast<size_t>(PyBytes_Size(utf8.ptr())));
                         }
                     },
                     nb::for_setter(nb::arg("value").none()))
        .def("is_dead",
             [](EmbeddedDfa& e, int64_t q) {
                 if (q < 0 || q >= e.num_states()) throw OutOfRange("no such state");
                 return e.is_dead(static_cast<int32_t>(q));
             })
        .def("classes",
             [](EmbeddedDfa& e, int64_t q) {
                 if (q < 0 || q >= e.num_states()) throw OutOfRange("no such state");
                 return classes_tuple(e.classes(static_cast<int32_t>(q)));
             })
        .def("min_lengths", [](EmbeddedDfa& e, nb::handle weights) { return e.min_lengths(weights_of(weights)); })
        .def("readable_bytes", [](EmbeddedDfa& e) { return mask_to(e.readable_bytes()); });

    nb::class_<SubstitutionMemo>(m, "SubstitutionMemo",
                                 "What substitutions with one mapping made of each sub-term (see structgen.automata.expr_rewrite.substitute).")
        .def(nb::init<>())
        .def("__len__", &SubstitutionMemo::size)
        .def_prop_ro("memory_bytes", &SubstitutionMemo::bytes);

    nb::class_<PyPool>(m, "Pool", "Hash-consed byte terms and their derivatives (see structgen.automata.expr).")
        .def(nb::init<>())
        .def("_fork_from", [](PyPool& self, PyPool& t) { self.fork_from(t); })
        .def("__len__", [](PyPool& p) { return p.size(); })
        .def("_dump", [](PyPool& p) { std::string s = p.dump(); return nb::bytes(s.data(), s.size()); })
        .def("_load", [](PyPool& p, nb::bytes data) {
            p.load(std::string(data.c_str(), data.size()));
            p.class_tuples.clear();
            p.symbol_frozensets.clear();
        })
        // constructors
        .def("bytes_of", [](PyPool& p, nb::handle mask) { return p.bytes_of(mask_from(mask)); })
        .def("byte_range",
             [](PyPool& p, int64_t lo, int64_t hi) {
                 byte_arg(lo), byte_arg(hi);
                 return p.bytes_of(ByteSet::range(static_cast<int>(lo), static_cast<int>(hi)));
             })
        .def("literal",
             [](PyPool& p, nb::bytes data) {
                 auto s = reinterpret_cast<const uint8_t*>(data.c_str());
                 return p.literal({s, data.size()});
             })
        .def("literals",
             [](PyPool& p, nb::handle texts) {  // (one call for an enumeration's spellings)
                 nb::list out;
                 for (nb::handle h : texts) {
                     if (!PyBytes_Check(h.ptr())) throw nb::type_error("literals: every text must be bytes");
                     auto s = reinterpret_cast<const uint8_t*>(PyBytes_AS_STRING(h.ptr()));
                     out.append(p.literal({s, static_cast<size_t>(PyBytes_GET_SIZE(h.ptr()))}));
                 }
                 return out;
             })
        .def("chain", [](PyPool& p, nb::handle heads, int64_t tail) {
            auto hs = p.ids(heads);
            return p.chain(hs, p.id(tail));
        })
        .def("seq", [](PyPool& p, int64_t a, int64_t b) { return p.seq(p.id(a), p.id(b)); })
        .def("concat", [](PyPool& p, nb::handle parts) {
            auto ps = p.ids(parts);
            return p.concat(ps);
        })
        .def("alt", [](PyPool& p, nb::handle parts) {
            auto ps = p.ids(parts);
            return p.alt(ps);
        })
        .def("optional", [](PyPool& p, int64_t x) {
            Id parts[2] = {p.id(x), EPSILON};
            return p.alt(parts);
        })
        .def("repeat",
             [](PyPool& p, int64_t x, nb::handle lo, nb::handle hi) {
                 int64_t l = counter_arg(lo);
                 int64_t h = hi.is_none() ? -1 : counter_arg(hi);
                 if (l < 0 || (!hi.is_none() && h < l)) {
                     std::string text = "a repetition {" + nb::cast<std::string>(nb::str(lo)) + "," +
                                        nb::cast<std::string>(nb::str(hi)) + "} is not a range";
                     throw InvalidArgument(text);
                 }
                 return p.repeat(p.id(x), l, h);
             },
             nb::arg("x"), nb::arg("lo"), nb::arg("hi").none())
        .def("star", [](PyPool& p, int64_t x) { return p.repeat(p.id(x), 0, -1); })
        .def("symbol", [](PyPool& p, int64_t k) { return p.symbol(k); })
        .def("both", [](PyPool& p, nb::handle parts, bool checked) {
            auto ps = p.ids(parts);
            return p.both(ps, checked);
        }, nb::arg("parts"), nb::kw_only(), nb::arg("checked") = true)
        .def("negate", [](PyPool& p, int64_t x, bool checked) { return p.negate(p.id(x), checked); },
             nb::arg("x"), nb::kw_only(), nb::arg("checked") = true)
        .def("minus", [](PyPool& p, int64_t a, int64_t b) { return p.minus(p.id(a), p.id(b)); })
        .def("add_embedded", [](PyPool& p, std::shared_ptr<EmbeddedDfa> dfa) { return p.add_embedded(std::move(dfa)); })
        .def("embed_state", [](PyPool& p, int64_t index, int64_t state) {
            if (index < 0 || static_cast<size_t>(index) >= p.num_embedded()) throw OutOfRange("no embedded automaton " + std::to_string(index));
            return p.embed_state(static_cast<uint32_t>(index), state);
        })
        .def_prop_ro("anything", [](PyPool& p) { return p.anything(); })
        .def_prop_ro("num_embedded", [](PyPool& p) { return p.num_embedded(); })
        // reading
        .def("node", [](PyPool& p, int64_t e) { return p.node_tuple(p.id(e)); })
        .def("embedded", [](PyPool& p, int64_t i) {
            if (i < 0 || static_cast<size_t>(i) >= p.num_embedded()) throw OutOfRange("no embedded automaton " + std::to_string(i));
            return p.embedded_ptr(static_cast<uint32_t>(i));
        })
        .def("nullable", [](PyPool& p, int64_t e) { return p.nullable(p.id(e)); })
        .def("derive", [](PyPool& p, int64_t e, int64_t b) { return p.derive(p.id(e), byte_arg(b)); })
        .def("derive_symbol", [](PyPool& p, int64_t e, int64_t k) { return p.derive_symbol(p.id(e), k); })
        .def("symbols_in", [](PyPool& p, int64_t e) { return p.symset(p.symbols_id(p.id(e))); })
        .def("size", [](PyPool& p, int64_t e) { return p.term_size(p.id(e)); })
        .def("lower_bound", [](PyPool& p, int64_t e) { return p.lower(p.id(e)); })
        .def("largest_counter", [](PyPool& p, int64_t e) { return p.counter(p.id(e)); })
        .def("is_algebraic", [](PyPool& p, int64_t e) { return p.algebraic(p.id(e)); })
        .def("is_live", [](PyPool& p, int64_t e) { return p.is_live(p.id(e)); })
        .def("liveness", [](PyPool& p, int64_t e, int64_t limit) { return p.search().liveness(p.id(e), limit); },
             nb::arg("e"), nb::arg("limit") = LIVENESS_LIMIT)
        .def("witness_length", [](PyPool& p, int64_t e, int64_t limit) { return p.search().witness_length(p.id(e), limit); },
             nb::arg("e"), nb::arg("limit") = LIVENESS_LIMIT)
        .def("byte_classes", [](PyPool& p, int64_t e) { return p.classes(p.id(e)); })
        .def("first_bytes", [](PyPool& p, int64_t e) { return mask_to(p.first_bytes(p.id(e))); })
        .def("readable_bytes", [](PyPool& p, int64_t e) { return mask_to(p.readable_bytes(p.id(e))); })
        .def("first_symbols", [](PyPool& p, int64_t e) { return p.symset(p.first_symbols(p.id(e))); })
        .def_prop_ro("memory_bytes", [](PyPool& p) { return p.memory_bytes(); })
        // the liveness search's internals (tests read them)
        .def("_shortest_text", [](PyPool& p, int64_t e) -> nb::object {
            const auto& t = p.search().shortest_text(p.id(e));
            if (!t) return nb::none();
            return nb::bytes(t->data(), t->size());
        })
        .def("_guessed", [](PyPool& p, int64_t e) { return p.search().guessed(p.id(e)); })
        .def("_relaxed", [](PyPool& p, int64_t e) { return p.search().relaxed(p.id(e)); })
        .def("_witness", [](PyPool& p) {
            nb::dict out;
            for (auto [x, w] : p.search().witness) out[nb::int_(x)] = w;
            return out;
        })
        .def("_gave_up", [](PyPool& p) {
            nb::set out;
            for (Id x : p.search().gave_up) out.add(x);
            return out;
        })
        .def("_alive", [](PyPool& p) {
            nb::set out;
            for (Id x : p.search().alive) out.add(x);
            return out;
        })
        // JSON strings under a length
        .def("mark_string_length", [](PyPool& p, int64_t unit, int64_t quote) { p.string_lengths().mark(p.id(unit), p.id(quote)); })
        .def("note_restricted", [](PyPool& p, int64_t e, int64_t r) { p.string_lengths().note_restricted(p.id(e), p.id(r)); })
        .def_prop_ro("string_length_quote", [](PyPool& p) { return p.string_lengths().quote(); })
        .def_prop_ro("string_length_units", [](PyPool& p) {
            std::vector<Id> units(p.string_lengths().units().begin(), p.string_lengths().units().end());
            std::sort(units.begin(), units.end());
            return units;
        })
        .def("string_with_length", [](PyPool& p, nb::handle members, bool opened) -> nb::object {
            auto ms = p.ids(members);
            auto got = p.string_lengths().string_with_length(ms, opened);
            if (!got) return nb::none();
            return nb::make_tuple(got->string, got->unit, got->hi);
        }, nb::arg("members"), nb::arg("opened") = true)
        .def("string_length_verdict", [](PyPool& p, int64_t e) { return p.string_lengths().verdict(p.id(e)); })
        .def("fewest_units", [](PyPool& p, int64_t s, int64_t u) -> nb::object {
            if (!p.string_lengths().marked()) throw InvalidArgument("the pool has no string length marked");
            auto got = p.string_lengths().fewest_units(p.id(s), p.id(u));
            return got ? nb::cast(*got) : nb::none();
        })
        .def("min_length", [](PyPool& p, int64_t e) { return p.string_lengths().min_length().of(p.id(e)); })
        // a term with sub-terms replaced (substitute.h: the memo is the caller's, one per pool)
        .def("substitute",
             [](PyPool& p, int64_t e, nb::dict mapping, SubstitutionMemo* memo, bool symbols) {
                 FlatMap<Id> map;
                 for (auto [k, v] : mapping) map.put(p.id(k), p.id(v));
                 SubstitutionMemo local;
                 return substitute(p, p.id(e), map, memo ? *memo : local, symbols);
             },
             nb::arg("e"), nb::arg("mapping"), nb::arg("memo").none(), nb::kw_only(), nb::arg("symbols") = false)
        // the clamps and the slices' per-term questions (memoised in the pool)
        .def("clamp", [](PyPool& p, int64_t e, int64_t n) { return p.clamps().clamp(p.id(e), n); })
        .def("code_points_term", [](PyPool& p, const std::vector<std::pair<int64_t, int64_t>>& intervals) {
            return code_points_term(p, intervals);
        })
        .def("factored", [](PyPool& p, nb::handle parts) {
            auto ps = p.ids(parts);
            return factored(p, ps);
        })
        .def("longest_shortest", [](PyPool& p, int64_t e) { return p.clamps().longest_shortest(p.id(e)); })
        .def("clampable_string", [](PyPool& p, nb::handle members, int64_t n) {
            auto ms = p.ids(members);
            return p.clamps().clampable_string(ms, n);
        })
        .def("in_length_bounded_string", [](PyPool& p, int64_t e) { return p.clamps().in_length_bounded_string(p.id(e)); })
        .def("uniform_successor", [](PyPool& p, int64_t e, int k) { return p.slices().uniform_successor(p.id(e), k); },
             nb::arg("e"), nb::arg("k") = 0)
        .def("counted_body", [](PyPool& p, int64_t e, int k) -> nb::object {
            auto got = p.slices().counted_body(p.id(e), k);
            if (!got) return nb::none();
            return nb::make_tuple(got->x, got->lo, got->hi, got->rest);
        });

    nb::class_<MinLength>(m, "MinLength",
                          "The fewest bytes of a string of each term of a pool, a symbol k weighing weights.get(k, 0).")
        .def("__init__",
             [](MinLength* self, nb::handle pool, nb::handle weights) {
                 new (self) MinLength(nb::cast<PyPool&>(pool), weights_of(weights));
             },
             nb::arg("pool"), nb::arg("weights"), nb::keep_alive<1, 2>())
        .def("of", [](MinLength& ml, int64_t e) {
            ml.pool().check(e);
            return ml.of(static_cast<Id>(e));
        });
}

}  // namespace structgen::py
