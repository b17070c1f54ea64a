// A small pool of native worker threads for a batch's masks: run(groups, threads, job) calls
// job(g) once for each group g in [0, groups) on up to `threads` threads (the caller's among
// them) and returns when every job is done (a helper that wakes after the groups were all taken
// is not waited for). Groups are the unit of exclusion: the caller puts
// all the work that touches one expression pool in one group, so no two threads ever touch the
// same pool (pools are not locked; everything shared between pools is: the vocabulary's index
// and slices). A job must not throw (what it cannot do, the caller's serial pass does again).
//
// The threads are made on first use and kept until the process ends (a batch step runs every few
// milliseconds); a process forked after that (vLLM's workers) makes its own on its first batch.
#pragma once
#include <cstddef>
#include <functional>

namespace structgen {

void run_in_parallel(size_t groups, size_t threads, const std::function<void(size_t)>& job);

}  // namespace structgen
