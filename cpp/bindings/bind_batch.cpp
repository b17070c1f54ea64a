// A batch's cold masks on native threads: before a batch step fills its rows one after another,
// prefetch() computes what their masks will ask for (a pushdown state's whole mask from its
// stacks, or its top frames at the trie's root; a DFA state's mask) on a pool of native threads,
// rows that share an expression pool on one thread (pools are not locked). The GIL stays held for
// the whole call, so no Python thread can touch a pool meanwhile; the native threads never touch
// Python. Frames and DFA masks are cached in the solvers and guides; a state's mask is written
// into the words its caller gave, and prefetch answers which of those were made whole (and, for
// one that stopped at an automaton not made yet, which: its caller makes it and asks again). The
// serial pass that follows (which raises any error a row has) finds the work done.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/vector.h>

#include <map>
#include <span>
#include <vector>

#include "../engine/work_pool.h"
#include "py_guides.h"

namespace structgen::py {

namespace {

using Words = nb::ndarray<int32_t, nb::ndim<1>, nb::c_contig, nb::device::cpu>;

struct Task {
    PyFrameSolver* solver = nullptr;  // a frame (a, q, node) of this solver, or a state's mask (stacks)
    PyDfaGuide* dfa = nullptr;        // or a mask of this DFA guide (state q)
    int64_t a = 0, q = 0, node = 0;
    std::vector<int64_t> stacks;      // a state's stacks: its mask OR-ed into words
    std::span<uint32_t> words;
    char* made = nullptr;             // (a state's task) set where its mask was made whole
    int64_t* missing = nullptr;       // (a state's task) the automaton it stopped at, not given yet
    void run() const noexcept {
        try {  // (best effort: what fails here, the serial pass does again and raises)
            if (made)
                *made = solver->masks.collect(stacks, words).empty();
            else if (solver)
                solver->core.frame(a, q, node);
            else
                dfa->core.mask(static_cast<int32_t>(q));
        } catch (const MissingAutomaton& e) {
            if (missing) *missing = e.automaton;
        } catch (...) {
        }
    }
};

}  // namespace

void bind_batch(nb::module_& m) {
    m.def("prefetch",
          [](nb::list frames, nb::list masks, int64_t threads, nb::list states) {
              if (threads < 1) throw InvalidArgument("prefetch: threads must be at least 1");
              std::map<const Pool*, std::vector<Task>> by_pool;  // (ordered: the same groups run alike every time)
              for (nb::handle h : frames) {
                  nb::tuple t = nb::cast<nb::tuple>(h);
                  if (t.size() != 4) throw InvalidArgument("prefetch: a frame is (solver, automaton, state, node)");
                  Task task{&nb::cast<PyFrameSolver&>(t[0]), nullptr, nb::cast<int64_t>(t[1]), nb::cast<int64_t>(t[2]),
                            nb::cast<int64_t>(t[3])};
                  if (!task.solver->pool) continue;  // (no automaton given yet: the serial pass makes it)
                  by_pool[task.solver->pool].push_back(std::move(task));
              }
              for (nb::handle h : masks) {
                  nb::tuple t = nb::cast<nb::tuple>(h);
                  if (t.size() != 2) throw InvalidArgument("prefetch: a mask is (DFA guide core, state)");
                  PyDfaGuide& g = nb::cast<PyDfaGuide&>(t[0]);
                  Task task{nullptr, &g, 0, g.state(nb::cast<int64_t>(t[1])), 0};
                  by_pool[&g.core.automaton().pool()].push_back(std::move(task));
              }
              std::vector<char> made(states.size(), 0);
              std::vector<int64_t> missing(states.size(), -1);
              std::vector<Words> held;  // (the words stay referenced while the threads write them)
              size_t i = 0;
              for (nb::handle h : states) {
                  nb::tuple t = nb::cast<nb::tuple>(h);
                  if (t.size() < 3) throw InvalidArgument("prefetch: a state is (solver, stacks, words, ...)");
                  PyFrameSolver& solver = nb::cast<PyFrameSolver&>(t[0]);
                  Words words = nb::cast<Words>(t[2]);
                  if (words.shape(0) != solver.core.words())
                      throw InvalidArgument("prefetch: a state's words are " + std::to_string(words.shape(0)) + " int32, not " +
                                            std::to_string(solver.core.words()) + " (the vocabulary's)");
                  Task task{&solver, nullptr, 0, 0, 0, nb::cast<std::vector<int64_t>>(t[1]),
                            std::span<uint32_t>(reinterpret_cast<uint32_t*>(words.data()), words.shape(0)), &made[i],
                            &missing[i]};
                  ++i;
                  held.push_back(words);
                  if (!solver.pool) continue;
                  by_pool[solver.pool].push_back(std::move(task));
              }
              std::vector<const std::vector<Task>*> groups;
              for (const auto& [pool, tasks] : by_pool) groups.push_back(&tasks);
              run_in_parallel(groups.size(), static_cast<size_t>(threads), [&](size_t g) {
                  for (const Task& task : *groups[g]) task.run();
              });
              nb::list out;
              for (size_t k = 0; k < made.size(); ++k) out.append(nb::make_tuple(nb::bool_(made[k] != 0), missing[k]));
              return out;
          },
          nb::arg("frames"), nb::arg("masks"), nb::arg("threads"), nb::arg("states") = nb::list(),
          "Compute frames [(FrameSolver, automaton, state, node)], DFA masks [(DfaGuideCore, state)] and states' "
          "masks [(FrameSolver, stacks, words int32, ...): FrameSolver.collect into words] on up to threads native "
          "threads, the work of one expression pool on one thread, the GIL held throughout. Answers, per state, "
          "(made, missing): whether its mask was made whole (else the words may hold part of it: collect again "
          "into them), and the automaton it stopped at for want of it (-1: none); other errors are left to the "
          "serial pass that follows (it finds the work cached)");
}

}  // namespace structgen::py
