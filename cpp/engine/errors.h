// The engine's exceptions. The binding layer maps each to structgen's error tree
// (structgen/errors.py): a limit is CompileBudgetExceeded, a bad argument ValueError, an index
// out of range IndexError. Nothing else escapes the engine.
#pragma once
#include <cstddef>
#include <pthread.h>

#include <cstdint>
#include <stdexcept>
#include <string>

namespace structgen {

// A limit of the engine was reached (maps to CompileBudgetExceeded(what, limit)).
struct BudgetExceeded : std::runtime_error {
    std::string what_;
    int64_t limit;
    BudgetExceeded(std::string what, int64_t limit)
        : std::runtime_error(what + " over " + std::to_string(limit)), what_(std::move(what)), limit(limit) {}
};

// An argument the engine cannot take (maps to ValueError).
struct InvalidArgument : std::invalid_argument {
    using std::invalid_argument::invalid_argument;
};

// A state from which no token of the vocabulary can continue (maps to VocabularyError).
struct DeadEnd : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// A term, state or automaton that does not exist (maps to IndexError).
struct OutOfRange : std::out_of_range {
    using std::out_of_range::out_of_range;
};

// How deep the engine's recursive walks over a term may go (each level is a C++ frame): past it,
// or where the thread's stack has less than STACK_MARGIN bytes left (a thread with a small stack,
// a sanitizer's larger frames), a walk stops with BudgetExceeded instead of overflowing the stack.
// Terms nest by their structure (chains of concatenations are walked in loops where they can be long).
constexpr int MAX_DEPTH = 8000;
constexpr uintptr_t STACK_MARGIN = 256 * 1024;

// the lowest address this thread's walks may reach (its stack's end plus the margin)
inline uintptr_t stack_floor() {
    thread_local uintptr_t floor = 0;
    if (!floor) {
        pthread_attr_t attr;
        void* addr = nullptr;
        size_t size = 0;
        if (pthread_getattr_np(pthread_self(), &attr) == 0) {
            pthread_attr_getstack(&attr, &addr, &size);
            pthread_attr_destroy(&attr);
        }
        floor = addr ? reinterpret_cast<uintptr_t>(addr) + STACK_MARGIN : 1;
    }
    return floor;
}

class DepthGuard {
public:
    explicit DepthGuard(int& depth) : depth_(depth) {
        char probe;
        if (++depth_ > MAX_DEPTH || reinterpret_cast<uintptr_t>(&probe) < stack_floor()) {
            --depth_;
            throw BudgetExceeded("nesting depth of a term", MAX_DEPTH);
        }
    }
    ~DepthGuard() { --depth_; }
    DepthGuard(const DepthGuard&) = delete;
    DepthGuard& operator=(const DepthGuard&) = delete;

private:
    int& depth_;
};

}  // namespace structgen
