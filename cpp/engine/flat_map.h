// Open-addressing hash tables with integer keys: the memo tables of the pool (derivatives by
// (term, byte), by (term, symbol), ...). Linear probing, power-of-two capacity, at most half full;
// the key ~0 marks an empty slot. No erase: memo tables only grow while their pool lives.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

namespace structgen {

inline uint64_t mix64(uint64_t x) {
    x ^= x >> 30;
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 27;
    x *= 0x94D049BB133111EBull;
    x ^= x >> 31;
    return x;
}

template <class V>
class FlatMap {
public:
    static constexpr uint64_t EMPTY = ~0ull;

    const V* find(uint64_t key) const {
        if (size_ == 0) return nullptr;
        size_t mask = keys_.size() - 1;
        for (size_t i = mix64(key) & mask;; i = (i + 1) & mask) {
            if (keys_[i] == key) return &values_[i];
            if (keys_[i] == EMPTY) return nullptr;
        }
    }
    V* find(uint64_t key) { return const_cast<V*>(static_cast<const FlatMap*>(this)->find(key)); }
    bool contains(uint64_t key) const { return find(key) != nullptr; }

    // sets key to value (inserting or overwriting)
    void put(uint64_t key, V value) {
        if (2 * (size_ + 1) > keys_.size()) grow();
        size_t mask = keys_.size() - 1;
        for (size_t i = mix64(key) & mask;; i = (i + 1) & mask) {
            if (keys_[i] == key) {
                values_[i] = std::move(value);
                return;
            }
            if (keys_[i] == EMPTY) {
                keys_[i] = key;
                values_[i] = std::move(value);
                ++size_;
                return;
            }
        }
    }
    size_t size() const { return size_; }
    size_t bytes() const { return keys_.size() * (sizeof(uint64_t) + sizeof(V)); }
    void clear() {
        keys_.clear();
        values_.clear();
        size_ = 0;
    }
    template <class F>
    void each(F&& f) const {
        for (size_t i = 0; i < keys_.size(); ++i)
            if (keys_[i] != EMPTY) f(keys_[i], values_[i]);
    }

private:
    void grow() {
        std::vector<uint64_t> keys(keys_.empty() ? 16 : 2 * keys_.size(), EMPTY);
        std::vector<V> values(keys.size());
        size_t mask = keys.size() - 1;
        for (size_t j = 0; j < keys_.size(); ++j) {
            if (keys_[j] == EMPTY) continue;
            size_t i = mix64(keys_[j]) & mask;
            while (keys[i] != EMPTY) i = (i + 1) & mask;
            keys[i] = keys_[j];
            values[i] = std::move(values_[j]);
        }
        keys_.swap(keys);
        values_.swap(values);
    }
    std::vector<uint64_t> keys_;
    std::vector<V> values_;
    size_t size_ = 0;
};

}  // namespace structgen
