// A batch's masks on native threads. fill_rows() fills the rows whose guides have a native core
// (a pushdown state's whole mask where its network needs no frame data or its stacks carry it, a
// DFA state's mask): the
// cached masks are copied, the cold ones made first on a pool of native threads, rows that share
// an expression pool on one thread (pools are not locked). It answers the rows it left to the
// caller (and, for one that stopped at an automaton not made yet, which: its caller makes it and
// asks again). prefetch() does the cold work of the rows the caller fills itself (a pushdown
// state's top frames at the trie's root, DFA masks) on the same threads, before its serial fill,
// which raises any error a row has and finds the work done. The GIL stays held for the whole
// call, so no Python thread can touch a pool meanwhile; the native threads never touch Python.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/vector.h>

#include <cstring>
#include <map>
#include <memory>
#include <span>
#include <string>
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

// one row of a batch's fill: the whole mask of a pushdown state (solver) or a DFA state (dfa)
struct RowTask {
    PyFrameSolver* solver = nullptr;
    PyDfaGuide* dfa = nullptr;
    int64_t state = 0, row = 0;
    std::shared_ptr<const TokenSet> set;  // the pushdown state's mask (null: left to the caller)
    std::shared_ptr<const Bits> bits;     // the DFA state's
    int64_t missing = -1;                 // the automaton it stopped at, not given yet
    bool filled() const { return set || bits; }
    void run() noexcept {
        try {  // (what fails here, the caller's serial fill does again and raises for that row alone)
            if (solver)
                set = solver->states.mask(state);
            else
                bits = dfa->core.mask(static_cast<int32_t>(state));
        } catch (const MissingAutomaton& e) {
            missing = e.automaton;
        } catch (...) {
        }
    }
};

using Bitmask = nb::ndarray<int32_t, nb::ndim<2>, nb::c_contig, nb::device::cpu>;

}  // namespace

void bind_batch(nb::module_& m) {
    m.def("fill_rows",
          [](nb::list rows, Bitmask bitmask, int64_t threads) {
              if (threads < 1) throw InvalidArgument("fill_rows: threads must be at least 1");
              const auto height = static_cast<int64_t>(bitmask.shape(0));
              const size_t width = bitmask.shape(1);
              std::vector<RowTask> tasks(rows.size());
              std::map<const Pool*, std::vector<RowTask*>> by_pool;  // (ordered: the same groups run alike every time)
              std::vector<RowTask*> alone;  // (a solver given no automaton yet: it stops at once, here)
              size_t i = 0;
              for (nb::handle h : rows) {
                  nb::tuple t = nb::cast<nb::tuple>(h);
                  if (t.size() != 3) throw InvalidArgument("fill_rows: a row is (guide core, state, bitmask row)");
                  RowTask& task = tasks[i++];
                  task.state = nb::cast<int64_t>(t[1]);
                  task.row = nb::cast<int64_t>(t[2]);
                  if (task.row < 0 || task.row >= height)
                      throw OutOfRange("fill_rows: no row " + std::to_string(task.row) + " in a bitmask of " + std::to_string(height));
                  size_t words = 0;
                  const Pool* pool = nullptr;
                  bool valid = false;
                  if (nb::isinstance<PyFrameSolver>(t[0])) {
                      task.solver = &nb::cast<PyFrameSolver&>(t[0]);
                      task.solver->own_states();  // (ValueError where the stacks are the guide's)
                      words = task.solver->core.words();
                      pool = task.solver->pool;
                      valid = task.state >= 0 && task.state < task.solver->stacks.num_configs();
                  } else {
                      task.dfa = &nb::cast<PyDfaGuide&>(t[0]);
                      words = task.dfa->core.index().words();
                      pool = &task.dfa->core.automaton().pool();
                      valid = task.dfa->core.automaton().valid(task.state);
                  }
                  if (words > width)
                      throw InvalidArgument("fill_rows: a bitmask of " + std::to_string(width) + " words for a vocabulary of " +
                                            std::to_string(words));
                  if (!valid) continue;  // (the caller's fill raises for it)
                  if (task.solver)
                      task.set = task.solver->states.find(task.state);
                  else
                      task.bits = task.dfa->core.cached(static_cast<int32_t>(task.state));
                  if (task.filled()) continue;  // (a warm row: written below, no thread woken for it)
                  (pool ? by_pool[pool] : alone).push_back(&task);
              }
              for (RowTask* task : alone) task->run();
              std::vector<const std::vector<RowTask*>*> groups;
              for (const auto& [pool, group] : by_pool) groups.push_back(&group);
              run_in_parallel(groups.size(), static_cast<size_t>(threads), [&](size_t g) {
                  for (RowTask* task : *groups[g]) task->run();
              });
              nb::list left;
              auto* out = reinterpret_cast<uint32_t*>(bitmask.data());
              for (size_t k = 0; k < tasks.size(); ++k) {
                  const RowTask& task = tasks[k];
                  if (!task.filled()) {
                      left.append(nb::make_tuple(k, task.missing));
                      continue;
                  }
                  const std::span<uint32_t> row(out + static_cast<size_t>(task.row) * width, width);
                  if (task.set) {
                      task.set->write(row);
                  } else {
                      std::memcpy(row.data(), task.bits->data(), task.bits->size() * 4);
                      std::memset(row.data() + task.bits->size(), 0, (width - task.bits->size()) * 4);
                  }
              }
              return left;
          },
          nb::arg("rows"), nb::arg("bitmask").noconvert(), nb::arg("threads"),
          "Fill bitmask rows [(guide core, state, row)] (a pushdown guide's FrameSolver or a DfaGuideCore) with their "
          "states' whole masks (cached, else made on up to threads native threads, the work of one expression pool on "
          "one thread, the GIL held throughout; the words past a vocabulary's are zeroed). Answers [(position, missing)] "
          "of the rows left to the caller: a mask the guide makes itself, an error (the caller's fill raises it), or "
          "an automaton not given yet (missing: hand it over and ask again; else -1)");

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
