// A batch's cold masks on native threads: before a batch step fills its rows one after another,
// prefetch() computes what their masks will ask for first (a pushdown state's top frames at the
// trie's root, a DFA state's mask) on a pool of native threads, rows that share an expression
// pool on one thread (pools are not locked). The GIL stays held for the whole call, so no Python
// thread can touch a pool meanwhile; the native threads never touch Python. The work is cached
// in the solvers and guides, and the serial pass that follows (which raises any error a row has)
// finds it there.
#include <nanobind/nanobind.h>
#include <nanobind/stl/vector.h>

#include <map>
#include <vector>

#include "../engine/work_pool.h"
#include "py_guides.h"

namespace structgen::py {

namespace {

struct Task {
    PyFrameSolver* solver = nullptr;  // a frame (a, q, node) of this solver
    PyDfaGuide* dfa = nullptr;        // or a mask of this DFA guide (state q)
    int64_t a = 0, q = 0, node = 0;
    void run() const noexcept {
        try {  // (best effort: what fails here, the serial pass does again and raises)
            if (solver)
                solver->core.frame(a, q, node);
            else
                dfa->core.mask(static_cast<int32_t>(q));
        } catch (...) {
        }
    }
};

}  // namespace

void bind_batch(nb::module_& m) {
    m.def("prefetch",
          [](nb::list frames, nb::list masks, int64_t threads) {
              if (threads < 1) throw InvalidArgument("prefetch: threads must be at least 1");
              std::map<const Pool*, std::vector<Task>> by_pool;  // (ordered: the same groups run alike every time)
              for (nb::handle h : frames) {
                  nb::tuple t = nb::cast<nb::tuple>(h);
                  if (t.size() != 4) throw InvalidArgument("prefetch: a frame is (solver, automaton, state, node)");
                  Task task{&nb::cast<PyFrameSolver&>(t[0]), nullptr, nb::cast<int64_t>(t[1]), nb::cast<int64_t>(t[2]),
                            nb::cast<int64_t>(t[3])};
                  if (!task.solver->pool) continue;  // (no automaton given yet: the serial pass makes it)
                  by_pool[task.solver->pool].push_back(task);
              }
              for (nb::handle h : masks) {
                  nb::tuple t = nb::cast<nb::tuple>(h);
                  if (t.size() != 2) throw InvalidArgument("prefetch: a mask is (DFA guide core, state)");
                  PyDfaGuide& g = nb::cast<PyDfaGuide&>(t[0]);
                  Task task{nullptr, &g, 0, g.state(nb::cast<int64_t>(t[1])), 0};
                  by_pool[&g.core.automaton().pool()].push_back(task);
              }
              std::vector<const std::vector<Task>*> groups;
              for (const auto& [pool, tasks] : by_pool) groups.push_back(&tasks);
              run_in_parallel(groups.size(), static_cast<size_t>(threads), [&](size_t g) {
                  for (const Task& task : *groups[g]) task.run();
              });
          },
          nb::arg("frames"), nb::arg("masks"), nb::arg("threads"),
          "Compute frames [(FrameSolver, automaton, state, node)] and DFA masks [(DfaGuideCore, state)] on up to "
          "threads native threads, the work of one expression pool on one thread, the GIL held throughout; errors "
          "are left to the serial pass that follows (it finds the work cached)");
}

}  // namespace structgen::py
