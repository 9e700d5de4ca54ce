#include "topology/cycle_search.h"

#include <algorithm>

namespace hybridsim::topology::detail {

void Multigraph::set(int u, int v, int links) {
  auto& row = adj[static_cast<std::size_t>(u)];
  const auto it = std::lower_bound(row.begin(), row.end(), std::pair<int, int>{v, 0},
                                   [](const auto& a, const auto& b) { return a.first < b.first; });
  const bool present = it != row.end() && it->first == v;
  if (links == 0) {
    if (present) row.erase(it);
  } else if (present) {
    it->second = links;
  } else {
    row.insert(it, {v, links});
  }
}

namespace {

class Search {
 public:
  Search(const Multigraph& graph, std::int64_t budget)
      : n_(graph.size()), residual_(graph.adj), budget_(budget) {}

  // Calls f(cycle) for every Hamiltonian cycle of the residual graph, in lexicographic order, each
  // once (start at 0, second vertex < last vertex). f returns true to stop; so does running out of
  // budget. Returns whether it stopped. Depth-first with an explicit stack: a ring of 65,536
  // vertices is a path that deep, too deep for the call stack. f may change the residual counts
  // while it runs, but restores them before it returns.
  template <class F>
  bool for_each_cycle(F&& f) {
    std::vector<int> path{0};
    std::vector<std::size_t> next{0};  // per vertex of the path: its next neighbour to try
    std::vector<char> visited(static_cast<std::size_t>(n_), 0);
    visited[0] = 1;
    if (++steps_ > budget_) return true;
    while (!path.empty()) {
      const auto& row = residual_[static_cast<std::size_t>(path.back())];
      std::size_t& i = next.back();
      while (i < row.size() && (row[i].first == 0 || visited[row[i].first] != 0 || row[i].second <= 0)) ++i;
      if (i == row.size()) {
        visited[path.back()] = 0;
        path.pop_back();
        next.pop_back();
        continue;
      }
      const int v = row[i++].first;
      if (++steps_ > budget_) return true;
      if (static_cast<int>(path.size()) + 1 < n_) {
        visited[v] = 1;
        path.push_back(v);
        next.push_back(0);
        continue;
      }
      path.push_back(v);
      const bool stop = links(v, 0) > 0 && path[1] < v ? f(path) : false;
      path.pop_back();
      if (stop) return true;
    }
    return false;
  }

  void apply(const Cycle& c, int delta) {
    for (std::size_t i = 0; i < c.size(); ++i) {
      const int u = c[i], v = c[(i + 1) % c.size()];
      entry(u, v) += delta;
      entry(v, u) += delta;
    }
  }
  int degree(int v) const {
    int d = 0;
    for (const auto& [u, count] : residual_[static_cast<std::size_t>(v)]) d += count;
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
  std::pair<int, int>* find(int u, int v) {
    auto& row = residual_[static_cast<std::size_t>(u)];
    const auto it = std::lower_bound(row.begin(), row.end(), std::pair<int, int>{v, 0},
                                     [](const auto& a, const auto& b) { return a.first < b.first; });
    return it != row.end() && it->first == v ? &*it : nullptr;
  }
  int links(int u, int v) {
    const auto* e = find(u, v);
    return e == nullptr ? 0 : e->second;
  }
  // A cycle found in the residual graph only uses pairs it lists.
  int& entry(int u, int v) { return find(u, v)->second; }

  int n_;
  std::vector<std::vector<std::pair<int, int>>> residual_;
  std::int64_t budget_;
  std::int64_t steps_ = 0;
};

}  // namespace

std::vector<Cycle> find_cycle_decomposition(const Multigraph& graph, int max_cycles, std::int64_t budget,
                                            const CycleSetScore& score, int perfect_score) {
  const int n = graph.size();
  Search search(graph, budget);
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
