// Edits of shared task lists (workloads/program/shared_task_lists.h): one edit for every list that
// reads the same tasks, each list keeping its shifts and its own collective.
#include <doctest/doctest.h>

#include <vector>

#include "sim/gpu_program.h"
#include "workloads/program/shared_task_lists.h"

using namespace hybridsim;

TEST_CASE("shared task lists: an edit made alike keeps each list's own collective its own") {
  sim::TaskList first{sim::Task::record(0), sim::TaskList::own_collective()};
  sim::TaskList second = sim::TaskList::shifted_from(first, 5, 0);
  first.set_own_collective(30, 0);
  second.set_own_collective(30, 1);  // one gather, each list its rank in it
  const std::vector<workloads::SharedGroup> groups = workloads::shared_groups({&first, &second});
  REQUIRE(groups.size() == 1);
  workloads::edit_alike(groups[0], [](std::vector<sim::Task>& tasks) {
    tasks.push_back(sim::Task::kernel(sim::Time::us(1), 9));
  });
  CHECK(first.same_tasks() == second.same_tasks());
  REQUIRE(second.size() == 3);
  CHECK(first[0].id == 0);
  CHECK(second[0].id == 5);
  CHECK(first[1].id == 30);
  CHECK(first[1].rank == 0);
  CHECK(second[1].id == 30);
  CHECK(second[1].rank == 1);  // the base's rank, read into the edit, would have made it 0
  CHECK(second[2].kind == sim::TaskKind::Kernel);
}

TEST_CASE("shared task lists: an edit made alike keeps each list's every own collective its own") {
  sim::TaskList first{sim::TaskList::own_collective(), sim::TaskList::own_collective(1)};
  sim::TaskList second = sim::TaskList::shifted_from(first, 5, 0);
  first.set_own_collective(30, 0);
  first.set_own_collective(31, 0, 1);
  second.set_own_collective(32, 1);
  second.set_own_collective(33, 1, 1);
  const std::vector<workloads::SharedGroup> groups = workloads::shared_groups({&first, &second});
  REQUIRE(groups.size() == 1);
  workloads::edit_alike(groups[0], [](std::vector<sim::Task>& tasks) {
    tasks.insert(tasks.begin(), sim::Task::kernel(sim::Time::us(1), 9));
  });
  CHECK(first.same_tasks() == second.same_tasks());
  REQUIRE(second.size() == 3);
  CHECK(first[2].id == 31);
  CHECK(second[1].id == 32);
  CHECK(second[2].id == 33);  // the base's, read into the edit, would have made it 31
  CHECK(second[2].rank == 1);
}
