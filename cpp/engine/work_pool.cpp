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
        auto round = std::make_shared<Round>(&job, groups);
        {
            std::lock_guard<std::mutex> hold(lock_);
            round_ = round;
            wanted_ = helpers;
            ++generation_;
        }
        wake_.notify_all();
        work(*round);
        // (only the groups a helper took are waited for: a helper that wakes late finds none left)
        std::unique_lock<std::mutex> hold(lock_);
        done_.wait(hold, [&] { return round->finished.load() == groups; });
        round_.reset();
    }

private:
    // one batch: its groups are taken one at a time by whoever comes first
    struct Round {
        const std::function<void(size_t)>* job;
        size_t groups;
        std::atomic<size_t> next{0}, finished{0};
        Round(const std::function<void(size_t)>* j, size_t n) : job(j), groups(n) {}
    };

    void grow(size_t helpers) {
        while (threads_.size() < helpers) {
            const size_t id = threads_.size();
            threads_.emplace_back([this, id] { serve(id); });
        }
    }

    void work(Round& round) {
        for (size_t g; (g = round.next.fetch_add(1)) < round.groups;) {
            (*round.job)(g);
            if (round.finished.fetch_add(1) + 1 == round.groups) {
                std::lock_guard<std::mutex> hold(lock_);
                done_.notify_all();
            }
        }
    }

    void serve(size_t id) {
        uint64_t seen = 0;
        for (;;) {
            std::shared_ptr<Round> round;  // (kept alive here: a late helper may still count its groups)
            {
                std::unique_lock<std::mutex> hold(lock_);
                wake_.wait(hold, [&] { return generation_ != seen && id < wanted_; });
                seen = generation_;
                round = round_;
            }
            if (round) work(*round);
        }
    }

    std::mutex batch_, lock_;
    std::condition_variable wake_, done_;
    std::vector<std::thread> threads_;
    std::shared_ptr<Round> round_;
    size_t wanted_ = 0;
    uint64_t generation_ = 0;
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
