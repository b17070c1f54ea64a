// The pushdown guide's native frames (structgen.guides.frame_masks.FrameMasks hands them the
// frames that need no frame data) and, where no frame carries any, its stacks and states' masks:
// see cpp/engine/frames.h.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/vector.h>

#include <cstring>
#include <optional>
#include <span>
#include <string>

#include "../engine/frames.h"
#include "../engine/token_bits.h"
#include "casters.h"
#include "numpy.h"
#include "py_guides.h"
#include "py_lazy.h"

namespace structgen::py {

namespace {

// call f; an automaton the solver was not given yet is KeyError(its number)
template <class F>
auto asking(F&& f) -> decltype(f()) {
    try {
        return f();
    } catch (const MissingAutomaton& e) {
        nb::object k = nb::int_(e.automaton);
        PyErr_SetObject(PyExc_KeyError, k.ptr());
        throw nb::python_error();
    }
}

// a frame as Python reads it: (token ids, return nodes, packed words or None, size)
nb::object frame_tuple(const Frame& f) {
    nb::object words = nb::none();
    if (f.bits) {
        std::vector<int32_t> w(f.bits->size());
        std::memcpy(w.data(), f.bits->data(), w.size() * sizeof(int32_t));
        words = nb::cast(owned(std::move(w)));
    }
    return nb::make_tuple(owned(std::vector<int64_t>(f.ids)), owned(std::vector<int64_t>(f.pops)), words, f.size());
}

}  // namespace

void bind_frames(nb::module_& m) {
    m.attr("GUARD_FIRST") = GUARD_FIRST;
    nb::exception<NeedsFrameData>(m, "NeedsFrameData", PyExc_ValueError);  // (a frame the solver cannot take)
    nb::class_<PyFrameSolver>(m, "FrameSolver",
                              "A pushdown guide's frames that need no frame data, and where no frame carries any, its "
                              "stacks and states' masks (see structgen.guides.frame_masks)")
        .def("__init__",
             [](PyFrameSolver* self, nb::list automata, std::shared_ptr<TokenIndex> index, int64_t max_entries,
                int64_t max_depth, int64_t mask_cache_bytes) {
                 std::vector<nb::object> objs;
                 std::vector<LazyAutomaton*> ptrs;
                 for (nb::handle h : automata) {
                     objs.push_back(nb::borrow(h));
                     ptrs.push_back(h.is_none() ? nullptr : &nb::cast<PyLazy&>(h).core);
                 }
                 if (ptrs.empty()) throw InvalidArgument("FrameSolver: a network has at least one automaton");
                 if (max_entries < 1) throw InvalidArgument("FrameSolver: max_entries must be at least 1");
                 if (max_depth < 1) throw InvalidArgument("FrameSolver: max_depth must be at least 1");
                 if (!index) throw InvalidArgument("FrameSolver: no token index");
                 new (self) PyFrameSolver(std::move(objs), std::move(ptrs), index, static_cast<size_t>(max_entries), max_depth,
                                          mask_cache_bytes);
             },
             nb::arg("automata"), nb::arg("index"), nb::arg("max_entries"), nb::arg("max_depth") = 128,
             nb::arg("mask_cache_bytes") = int64_t(64) << 20,
             "The frames of a network's automata (None: not made yet) over the index's vocabulary, its stacks "
             "(stack 0 is automaton 0 at its start, state 0 is {stack 0}; calls nest at most max_depth frames) and "
             "its states' masks (cached up to mask_cache_bytes)")
        .def("frame",
             [](PyFrameSolver& s, int64_t a, int64_t q, int64_t node) {
                 return frame_tuple(*asking([&] { return s.core.frame(a, q, node); }));
             },
             nb::arg("automaton"), nb::arg("state"), nb::arg("node"),
             "(token ids, return nodes, words, size) of the frame of automaton in state from trie node: where the "
             "frame reads a string slice, its tokens as packed int32 words (ids then empty), else words None; "
             "NeedsFrameData where the frame needs frame data")
        .def("data_frame",
             [](PyFrameSolver& s, int64_t a, int64_t q, int64_t node, int64_t data) {
                 return frame_tuple(*asking([&] { return s.data_masks.frame_of(a, q, node, data); }));
             },
             nb::arg("automaton"), nb::arg("state"), nb::arg("node"), nb::arg("data"),
             "As frame, of a frame with its frame data (share_data: an item id, a set id, the keys written; 0 for "
             "none): where the guide keeps the stacks (unique arrays nested in items), the frames it does not make "
             "itself; NeedsFrameData for those it does (an item with an array nested in it, its array, a frame that "
             "enters one)")
        .def("blocking_guards",
             [](PyFrameSolver& s, int64_t a, int64_t q) -> std::optional<uint64_t> {
                 return asking([&] {
                     s.core.automaton(a).check(q);
                     return s.stacks.guards().blocking_guards(a, static_cast<int32_t>(q));
                 });
             },
             nb::arg("automaton"), nb::arg("state"),
             "The key guards (bit g: key g) that state of automaton meets first on every way on, where none of "
             "them closes the object; None where it can always finish (a final state or a close guard ahead). The "
             "state is dead once every one of them is written (KeyGuards; the automaton handed over first)")
        .def("expand",
             [](PyFrameSolver& s, int64_t a, const std::vector<int64_t>& pops, const std::vector<int64_t>& nodes,
                const std::vector<int64_t>& callees, const std::vector<int64_t>& rets) {
                 if (nodes.size() != callees.size() || nodes.size() != rets.size())
                     throw InvalidArgument("FrameSolver.expand: nodes, callees and rets of different lengths");
                 std::vector<FrameSolver::Call> calls;
                 calls.reserve(nodes.size());
                 for (size_t i = 0; i < nodes.size(); ++i) {
                     if (rets[i] < 0 || rets[i] > INT32_MAX) throw OutOfRange("FrameSolver.expand: no state " + std::to_string(rets[i]));
                     calls.push_back({nodes[i], callees[i], static_cast<int32_t>(rets[i])});
                 }
                 Frame f = asking([&] { return s.core.expand(a, pops, calls); });
                 if (f.bits) f.ids = ids_of_bits(*f.bits);  // (a large walk's tokens, packed: listed, as the caller reads ids)
                 return nb::make_tuple(owned(std::move(f.ids)), owned(std::move(f.pops)));
             },
             nb::arg("automaton"), nb::arg("pops"), nb::arg("nodes"), nb::arg("callees"), nb::arg("rets"),
             "(token ids, return nodes): the callees' frames at nodes (> 0) and the automaton's frames after each of "
             "their returns, united; the pops given, then theirs, each once (a frame whose own walk was made in Python); "
             "NeedsFrameData where one of them needs frame data")
        .def("stack",
             [](PyFrameSolver& s, int64_t a, int64_t q, int64_t parent, int64_t data) { return s.own_stacks().stack(a, q, parent, data); },
             nb::arg("automaton"), nb::arg("state"), nb::arg("parent"), nb::arg("data") = 0,
             "The stack (automaton, state, data) on top of stack parent (-1: none), made if new")
        .def("share_data",
             [](PyFrameSolver& s, std::vector<uint8_t> kinds, std::vector<uint64_t> required, nb::object unique) {
                 UniqueData* u = unique.is_none() ? nullptr : &nb::cast<UniqueData&>(unique);
                 if (u && s.pool && s.pool != &u->pool()) throw InvalidArgument("FrameSolver.share_data: unique data of another pool");
                 if (kinds.size() > static_cast<size_t>(s.core.num_automata()))
                     throw InvalidArgument("FrameSolver.share_data: kinds of " + std::to_string(kinds.size()) + " automata, the network has " +
                                           std::to_string(s.core.num_automata()));
                 s.stacks.share_data(u, std::move(kinds), std::move(required));
                 if (u) {
                     s.pool = &u->pool();
                     s.unique = std::move(unique);
                 }
             },
             nb::arg("kinds"), nb::arg("required") = std::vector<uint64_t>{}, nb::arg("unique") = nb::none(),
             "The stacks carry frame data (kinds[k]: 0 plain, 1 a unique array, 2 its item, which need unique; 3 an "
             "object with key guards, whose required keys are required[k], bit i for key i; 4 held: an item with a "
             "unique array nested in it, or its array, whose frames and stacks the guide keeps): stack, step, "
             "next_state and collect_data work with it, or with a held automaton data_frame only")
        .def("config", [](PyFrameSolver& s, const std::vector<int64_t>& stacks) { return s.own_stacks().config(stacks); },
             nb::arg("stacks"), "The state that is this set of stacks, made if new")
        .def("step",
             [](PyFrameSolver& s, const std::vector<int64_t>& stacks, int b) {
                 std::vector<int64_t> out;
                 asking([&] { s.own_stacks().step(stacks, b, out); });
                 return out;
             },
             nb::arg("stacks"), nb::arg("byte"),
             "The stacks after reading byte from stacks (calls and returns taken as needed; a stack may come twice). "
             "KeyError(k) for an automaton not given yet: hand it over and ask again")
        .def("next_state",
             [](PyFrameSolver& s, int64_t state, nb::bytes token) {
                 std::span<const uint8_t> data(reinterpret_cast<const uint8_t*>(token.c_str()), token.size());
                 return asking([&] { return s.own_stacks().next_state(state, data); });
             },
             nb::arg("state"), nb::arg("token"),
             "The state after the token's bytes from state (-1: refused). KeyError(k) as step")
        .def("stacks_from",
             [](const PyFrameSolver& s, int64_t n) {
                 if (n < 0 || n > s.stacks.num_stacks()) throw OutOfRange("FrameSolver.stacks_from: no stack " + std::to_string(n));
                 nb::list entries, depths, records;
                 for (int64_t i = n; i < s.stacks.num_stacks(); ++i) {
                     const StackTable::Entry& e = s.stacks.entry(i);
                     entries.append(nb::make_tuple(e.a, e.q, e.parent, e.data));
                     depths.append(e.depth);
                     records.append(e.records);
                 }
                 return nb::make_tuple(entries, depths, records);
             },
             nb::arg("n"), "([(automaton, state, parent, data), ...], [depth, ...], [records, ...]) of stacks n, n + 1, ...")
        .def("configs_from",
             [](const PyFrameSolver& s, int64_t n) {
                 if (n < 0 || n > s.stacks.num_configs()) throw OutOfRange("FrameSolver.configs_from: no state " + std::to_string(n));
                 nb::list out;
                 for (int64_t i = n; i < s.stacks.num_configs(); ++i) {
                     const std::span<const int64_t> got = s.stacks.stacks_of(i);
                     nb::tuple t = nb::steal<nb::tuple>(PyTuple_New(static_cast<Py_ssize_t>(got.size())));
                     for (size_t j = 0; j < got.size(); ++j)
                         PyTuple_SET_ITEM(t.ptr(), static_cast<Py_ssize_t>(j), PyLong_FromLongLong(got[j]));
                     out.append(t);
                 }
                 return out;
             },
             nb::arg("n"), "The stacks of states n, n + 1, ... (each a sorted tuple)")
        .def("state_mask",
             [](PyFrameSolver& s, int64_t state) -> nb::object {
                 std::shared_ptr<const TokenSet> got = asking([&] { return s.own_states().mask(state); });
                 return got ? nb::cast(packed_copy(got->bits())) : nb::none();
             },
             nb::arg("state"),
             "The state's whole mask as packed int32 words (a new array; EOS where a stack may end), cached; None where "
             "the guide makes it (a stack near the nesting bound, a mask with frame data the solver leaves to the guide, "
             "a dead end). ValueError where the stacks are the guide's. KeyError(k) for an automaton not given yet")
        .def("keep_mask",
             [](PyFrameSolver& s, int64_t state, nb::ndarray<const int32_t, nb::ndim<1>, nb::c_contig, nb::device::cpu> words) {
                 s.own_states().keep(state, {reinterpret_cast<const uint32_t*>(words.data()), words.shape(0)});
             },
             nb::arg("state"), nb::arg("words"), "Keep words (the vocabulary's width) as the state's whole mask")
        .def_prop_ro("num_masks", [](const PyFrameSolver& s) { return s.states.num_masks(); })
        .def_prop_ro("num_stacks", [](const PyFrameSolver& s) { return s.stacks.num_stacks(); })
        .def_prop_ro("num_configs", [](const PyFrameSolver& s) { return s.stacks.num_configs(); })
        .def("collect",
             [](PyFrameSolver& s, const std::vector<int64_t>& stacks, nb::ndarray<int32_t, nb::ndim<1>, nb::c_contig, nb::device::cpu> words) {
                 std::span<uint32_t> out(reinterpret_cast<uint32_t*>(words.data()), words.shape(0));
                 if (out.size() != s.core.words())
                     throw InvalidArgument("FrameSolver.collect: words of " + std::to_string(out.size()) + " int32, not " +
                                           std::to_string(s.core.words()) + " (the vocabulary's)");
                 asking([&] { s.own_masks().collect(stacks, out); });
             },
             nb::arg("stacks"), nb::arg("words").noconvert(),
             "OR the masks of the stacks (from the root: each top frame's tokens and its callers' from where it "
             "returns) into words (int32, one bit per token). KeyError(k) for an automaton not given yet: hand it over and "
             "ask again (what was OR-ed stays OR-ed)")
        .def("collect_data",
             [](PyFrameSolver& s, const std::vector<int64_t>& stacks, nb::ndarray<int32_t, nb::ndim<1>, nb::c_contig, nb::device::cpu> words) {
                 std::span<uint32_t> out(reinterpret_cast<uint32_t*>(words.data()), words.shape(0));
                 if (out.size() != s.core.words())
                     throw InvalidArgument("FrameSolver.collect_data: words of " + std::to_string(out.size()) + " int32, not " +
                                           std::to_string(s.core.words()) + " (the vocabulary's)");
                 if (!s.stacks.carries_data()) throw InvalidArgument("FrameSolver.collect_data: the stacks carry no frame data (share_data)");
                 asking([&] { s.data_masks.collect(stacks, out); });
             },
             nb::arg("stacks"), nb::arg("words").noconvert(),
             "OR the masks of the stacks into words where they carry frame data (share_data): the frames of the "
             "objects with key guards, the unique arrays and their items made natively with their data. NeedsFrameData where the guide "
             "makes the mask (words may hold part of it); KeyError(k) as collect")
        .def_prop_ro("data_counts", [](const PyFrameSolver& s) { return nb::make_tuple(s.data_masks.num_frames(), s.data_masks.shared_returns()); },
                     "(frames with data cached, string items' returns shared as the array's frames of no item written)")
        .def("mark_frame_data", [](PyFrameSolver& s, int64_t k, bool own_plain) { s.core.mark_frame_data(k, own_plain); },
             nb::arg("k"), nb::arg("own_plain") = false,
             "Mark automaton k as carrying frame data: frame and expand raise NeedsFrameData for a frame that "
             "enters it or passes a guard, and for a frame of it unless own_plain (an item that calls nothing: its "
             "frames need no data; the guide narrows them); the guide makes the refused frames; the stacks and "
             "states are then the guide's (stack, step, state_mask, collect and fill_rows raise ValueError)")
        .def("set_automaton",
             [](PyFrameSolver& s, int64_t k, nb::object automaton) {
                 PyLazy& lazy = nb::cast<PyLazy&>(automaton);
                 const bool had = s.core.has_automaton(k);
                 s.same_pool(lazy.core);
                 s.core.set_automaton(k, &lazy.core);
                 if (!had) s.autos.push_back(std::move(automaton));
             },
             nb::arg("k"), nb::arg("automaton"),
             "Hand automaton k over (frame and expand raise KeyError(k) where they need one not given yet; the "
             "same one again is nothing new)")
        .def_prop_ro("memory_bytes", [](const PyFrameSolver& s) {
            return s.core.memory_bytes() + s.masks.memory_bytes() + s.stacks.memory_bytes() + s.states.memory_bytes() + s.data_masks.memory_bytes();
        })
        .def_prop_ro("has_frame_data", [](const PyFrameSolver& s) { return s.core.any_frame_data(); },
                     "Whether an automaton was marked as carrying frame data (mark_frame_data)")
        .def_prop_ro("frames_only", [](const PyFrameSolver& s) { return s.stacks.frames_only(); },
                     "Whether the frame data was shared for data_frame only (share_data with a held automaton: the guide keeps the stacks)")
        .def_prop_ro("num_frames", [](const PyFrameSolver& s) { return s.core.num_frames(); })
        .def_prop_ro("walk_counts",
                     [](const PyFrameSolver& s) {
                         const FrameSolver::WalkCounts c = s.core.walk_counts();
                         return nb::make_tuple(c.plain, c.cut, c.short_);
                     },
                     "The walks cached, (plain, cut, short): a cut walk is the root of a string's position near its "
                     "length bound, its short tokens (a short walk) shared by the positions that clamp alike")
        .def_prop_ro("closure_slices", [](const PyFrameSolver& s) { return s.core.closure_slices(); },
                     "How many root walks took a string slice's tokens where its characters lead different ways "
                     "(every state they lead to reads every slice token: a key's first characters in an open object)");
}

}  // namespace structgen::py
