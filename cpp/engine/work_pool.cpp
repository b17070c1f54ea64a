#include "work_pool.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace structgen {

namespace {

// Made once per process and never destroyed: its helpers wait for work until the process ends
// (joining them at exit, or destroying a condition variable a forked child copied with its
// parent's waiters in it, could hang).
class WorkPool {
public:
    const pid_t pid = getpid();

    void run(size_t groups, size_t threads, const std::function<void(size_t)>& job) {
        std::lock_guard<std::mutex> one_batch(batch_);  // (one batch at a time: the helpers are shared)
        const size_t helpers = std::min(threads, groups) - 1;
        grow(helpers);
        next_.store(0);
        {
            std::lock_guard<std::mutex> hold(lock_);
            job_ = &job;
            groups_ = groups;
            wanted_ = helpers;
            running_ = helpers;
            ++round_;
        }
        wake_.notify_all();
        drain();
        std::unique_lock<std::mutex> hold(lock_);
        done_.wait(hold, [&] { return running_ == 0; });
        job_ = nullptr;
    }

private:
    void grow(size_t helpers) {
        while (threads_.size() < helpers) {
            const size_t id = threads_.size();
            threads_.emplace_back([this, id] { serve(id); });
        }
    }

    void drain() {
        for (size_t g; (g = next_.fetch_add(1)) < groups_;) (*job_)(g);
    }

    void serve(size_t id) {
        uint64_t seen = 0;
        for (;;) {
            {
                std::unique_lock<std::mutex> hold(lock_);
                wake_.wait(hold, [&] { return round_ != seen && id < wanted_; });
                seen = round_;
            }
            drain();
            std::lock_guard<std::mutex> hold(lock_);
            if (--running_ == 0) done_.notify_all();
        }
    }

    std::mutex batch_, lock_;
    std::condition_variable wake_, done_;
    std::vector<std::thread> threads_;
    const std::function<void(size_t)>* job_ = nullptr;
    std::atomic<size_t> next_{0};
    size_t groups_ = 0, wanted_ = 0, running_ = 0;
    uint64_t round_ = 0;
};

}  // namespace

void run_in_parallel(size_t groups, size_t threads, const std::function<void(size_t)>& job) {
    if (groups == 0) return;
    if (threads <= 1 || groups == 1) {
        for (size_t g = 0; g < groups; ++g) job(g);
        return;
    }
    static std::mutex made;
    static WorkPool* pool = nullptr;
    {
        std::lock_guard<std::mutex> hold(made);
        if (!pool || pool->pid != getpid()) pool = new WorkPool;  // (a forked child: the parent's pool, threads and all, is left be)
    }
    pool->run(groups, threads, job);
}

}  // namespace structgen
