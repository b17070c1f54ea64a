// The pushdown guide's native frames (structgen.guides.frame_masks.FrameMasks hands them the
// frames below the root of a network without frame data): see cpp/engine/frames.h.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/vector.h>

#include <cstring>

#include "../engine/frames.h"
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

}  // namespace

void bind_frames(nb::module_& m) {
    m.attr("GUARD_FIRST") = GUARD_FIRST;
    nb::class_<PyFrameSolver>(m, "FrameSolver",
                              "The frames below the root of a pushdown guide whose network needs no frame data (see "
                              "structgen.guides.frame_masks)")
        .def("__init__",
             [](PyFrameSolver* self, nb::list automata, std::shared_ptr<TokenIndex> index, int64_t max_entries) {
                 std::vector<nb::object> objs;
                 std::vector<LazyAutomaton*> ptrs;
                 for (nb::handle h : automata) {
                     objs.push_back(nb::borrow(h));
                     ptrs.push_back(h.is_none() ? nullptr : &nb::cast<PyLazy&>(h).core);
                 }
                 if (max_entries < 1) throw InvalidArgument("FrameSolver: max_entries must be at least 1");
                 new (self) PyFrameSolver(std::move(objs), std::move(ptrs), std::move(index), static_cast<size_t>(max_entries));
             },
             nb::arg("automata"), nb::arg("index"), nb::arg("max_entries"))
        .def("frame",
             [](PyFrameSolver& s, int64_t a, int64_t q, int64_t node) {
                 std::shared_ptr<const Frame> f = asking([&] { return s.core.frame(a, q, node); });
                 nb::object words = nb::none();
                 if (f->bits) {
                     std::vector<int32_t> w(f->bits->size());
                     std::memcpy(w.data(), f->bits->data(), w.size() * sizeof(int32_t));
                     words = nb::cast(owned(std::move(w)));
                 }
                 return nb::make_tuple(owned(std::vector<int64_t>(f->ids)), owned(std::vector<int64_t>(f->pops)), words,
                                       f->size());
             },
             nb::arg("automaton"), nb::arg("state"), nb::arg("node"),
             "(token ids, return nodes, words, size) of the frame of automaton in state from trie node: where the "
             "frame reads a string slice, its tokens as packed int32 words (ids then empty), else words None")
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
                 return nb::make_tuple(owned(std::move(f.ids)), owned(std::move(f.pops)));
             },
             nb::arg("automaton"), nb::arg("pops"), nb::arg("nodes"), nb::arg("callees"), nb::arg("rets"),
             "(token ids, return nodes): the callees' frames at nodes (> 0) and the automaton's frames after each of "
             "their returns, united; the pops given, then theirs, each once (a frame whose own walk was made in Python)")
        .def("add_stacks",
             [](PyFrameSolver& s, const std::vector<int64_t>& automata, const std::vector<int64_t>& states,
                const std::vector<int64_t>& parents) {
                 if (automata.size() != states.size() || automata.size() != parents.size())
                     throw InvalidArgument("FrameSolver.add_stacks: automata, states and parents of different lengths");
                 for (size_t i = 0; i < automata.size(); ++i) asking([&] { s.masks.add(automata[i], states[i], parents[i]); });
             },
             nb::arg("automata"), nb::arg("states"), nb::arg("parents"),
             "Add stacks num_stacks, num_stacks + 1, ...: (automaton, state) on top of the parent stack (-1: none; "
             "else one added before). KeyError(k) for an automaton not given yet (the stacks before it are added)")
        .def_prop_ro("num_stacks", [](const PyFrameSolver& s) { return s.masks.num_stacks(); })
        .def("collect",
             [](PyFrameSolver& s, const std::vector<int64_t>& stacks, nb::ndarray<int32_t, nb::ndim<1>, nb::c_contig, nb::device::cpu> words) {
                 std::span<uint32_t> out(reinterpret_cast<uint32_t*>(words.data()), words.shape(0));
                 if (out.size() != s.core.words())
                     throw InvalidArgument("FrameSolver.collect: words of " + std::to_string(out.size()) + " int32, not " +
                                           std::to_string(s.core.words()) + " (the vocabulary's)");
                 return asking([&] { return s.masks.collect(stacks, out); });
             },
             nb::arg("stacks"), nb::arg("words"),
             "OR the masks of the stacks (from the root: each top frame's tokens and its callers' from where it "
             "returns) into words (int32, one bit per token); answers the stacks left to the caller (a top at the "
             "root of a string under a length bound). KeyError(k) for an automaton not given yet: hand it over and "
             "ask again (what was OR-ed stays OR-ed)")
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
        .def_prop_ro("memory_bytes", [](const PyFrameSolver& s) { return s.core.memory_bytes() + s.masks.memory_bytes(); })
        .def_prop_ro("num_frames", [](const PyFrameSolver& s) { return s.core.num_frames(); });
}

}  // namespace structgen::py
