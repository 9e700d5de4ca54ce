#include "topology/cycle_search.h"

#include <algorithm>

namespace hybridsim::topology::detail {
namespace {

class Search {
 public:
  Search(int n, const std::vector<int>& cap, std::int64_t budget)
      : n_(n), residual_(cap), budget_(budget) {}

  // Calls f(cycle) for every Hamiltonian cycle of the residual graph, in lexicographic order, each
  // once (start at 0, second vertex < last vertex). f returns true to stop; so does running out of
  // budget. Returns whether it stopped.
  template <class F>
  bool for_each_cycle(F&& f) {
    std::vector<int> path{0};
    std::vector<char> visited(static_cast<std::size_t>(n_), 0);
    visited[0] = 1;
    return extend(path, visited, f);
  }

  void apply(const Cycle& c, int delta) {
    for (std::size_t i = 0; i < c.size(); ++i) {
      const int u = c[i], v = c[(i + 1) % c.size()];
      residual_[u * n_ + v] += delta;
      residual_[v * n_ + u] += delta;
    }
  }
  int degree(int v) const {
    int d = 0;
    for (int u = 0; u < n_; ++u) d += residual_[v * n_ + u];
    return d;
  }
  void reset_budget() { steps_ = 0; }

  // Finds `target` cycles (chosen in non-decreasing lexicographic order, so each set is seen once).
  // Without a score: stops at the first set. With one: keeps the best in `best`.
  bool decompose(int target, std::vector<Cycle>& chosen, const CycleSetScore& score, int perfect,
                 std::vector<Cycle>& best, int& best_score) {
    if (static_cast<int>(chosen.size()) == target) {
      const int s = score ? score(chosen) : perfect;
      if (best.empty() || s > best_score) {
        best = chosen;
        best_score = s;
      }
      return s >= perfect;
    }
    const int left = target - static_cast<int>(chosen.size());
    for (int v = 0; v < n_; ++v)
      if (degree(v) < 2 * left) return false;
    return for_each_cycle([&](const Cycle& c) {
      if (!chosen.empty() && c < chosen.back()) return false;
      apply(c, -1);
      chosen.push_back(c);
      const bool stop = decompose(target, chosen, score, perfect, best, best_score);
      chosen.pop_back();
      apply(c, +1);
      return stop;
    });
  }

 private:
  template <class F>
  bool extend(std::vector<int>& path, std::vector<char>& visited, F& f) {
    if (++steps_ > budget_) return true;
    const int u = path.back();
    if (static_cast<int>(path.size()) == n_)
      return residual_[u * n_] > 0 && path[1] < u ? f(path) : false;
    for (int v = 1; v < n_; ++v) {
      if (visited[v] || residual_[u * n_ + v] <= 0) continue;
      visited[v] = 1;
      path.push_back(v);
      const bool stop = extend(path, visited, f);
      path.pop_back();
      visited[v] = 0;
      if (stop) return true;
    }
    return false;
  }

  int n_;
  std::vector<int> residual_;
  std::int64_t budget_;
  std::int64_t steps_ = 0;
};

}  // namespace

std::vector<Cycle> find_cycle_decomposition(int n, const std::vector<int>& cap, int max_cycles,
                                            std::int64_t budget, const CycleSetScore& score,
                                            int perfect_score) {
  Search search(n, cap, budget);
  int upper = max_cycles;
  for (int v = 0; v < n; ++v) upper = std::min(upper, search.degree(v) / 2);
  if (upper <= 0 || n < 3) return {};

  // Greedy: take the first cycle of what is left, as long as there is one.
  std::vector<Cycle> result;
  while (static_cast<int>(result.size()) < upper) {
    search.reset_budget();
    Cycle found;
    search.for_each_cycle([&](const Cycle& c) {
      found = c;
      return true;
    });
    if (found.empty()) break;
    search.apply(found, -1);
    result.push_back(found);
  }
  for (const auto& c : result) search.apply(c, +1);

  // Exhaustive (within budget) for more cycles than greedy found.
  for (int target = upper; target > static_cast<int>(result.size()); --target) {
    search.reset_budget();
    std::vector<Cycle> chosen, best;
    int best_score = 0;
    search.decompose(target, chosen, {}, 0, best, best_score);
    if (!best.empty()) {
      result = best;
      break;
    }
  }
  if (score && !result.empty()) {
    search.reset_budget();
    std::vector<Cycle> chosen, best = result;
    int best_score = score(result);
    if (best_score < perfect_score)
      search.decompose(static_cast<int>(result.size()), chosen, score, perfect_score, best,
                       best_score);
    result = best;
  }
  return result;
}

}  // namespace hybridsim::topology::detail
