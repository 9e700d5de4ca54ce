// Shared programs (sim/gpu_program.h, TaskList): a list shifted from another reads as the other's
// tasks with its events and collective indices moved, shifts add up, and changing one copies it.
#include <doctest/doctest.h>

#include "sim/gpu_program.h"

using namespace hybridsim::sim;

TEST_CASE("a shifted list reads as its base with events and collectives moved") {
  TaskList base{Task::wait(2), Task::kernel(Time::us(40), 7), Task::record(3), Task::collective(5, 1)};
  TaskList later = TaskList::shifted_from(base, 10, 100);
  CHECK(base.is_shared());
  CHECK(later.same_tasks() == base.same_tasks());
  REQUIRE(later.size() == 4);
  CHECK(later[0].id == 12);                 // wait on event 2 + 10
  CHECK(later[1].id == 7);                  // a kernel's label is not shifted
  CHECK(later[1].duration == Time::us(40));
  CHECK(later[2].id == 13);                 // record 3 + 10
  CHECK(later[3].id == 105);                // collective 5 + 100
  CHECK(later[3].rank == 1);
  CHECK(base[2].id == 3);                   // the base reads as before

  // Shifted from a shifted list: both shifts.
  const TaskList again = TaskList::shifted_from(later, 1, 2);
  CHECK(again[0].id == 13);
  CHECK(again[3].id == 107);

  // Changing one copies it, the others keep reading the shared tasks.
  later.push_back(Task::record(4));
  CHECK_FALSE(later.is_shared());
  REQUIRE(later.size() == 5);
  CHECK(later[0].id == 12);
  CHECK(later[4].id == 4);
  CHECK(base.size() == 4);
  CHECK(again.size() == 4);
  std::uint32_t ids = 0;
  for (const Task& t : again) ids += t.id;
  CHECK(ids == 13 + 7 + 14 + 107);
}

TEST_CASE("a list's own collective reads as that list's index and rank, passed on and written out") {
  // ZeRO's gather after the optimizer: one task of a shared list whose index and rank are each
  // reader's own (no shift gives a GPU's rank in its group).
  TaskList base{Task::kernel(Time::us(40), 7), TaskList::own_collective(), Task::collective(5, 1)};
  TaskList later = TaskList::shifted_from(base, 10, 100);
  base.set_own_collective(20, 0);
  later.set_own_collective(21, 3);
  CHECK(later.same_tasks() == base.same_tasks());
  CHECK(base[1].id == 20);
  CHECK(base[1].rank == 0);
  CHECK(later[1].id == 21);  // not shifted by 100
  CHECK(later[1].rank == 3);
  CHECK(later[2].id == 105);  // the others' collectives shift as before
  CHECK(later[2].rank == 1);
  CHECK(later.shifted(later.stored()[1]).id == 21);
  // A list shifted from it reads the same own collective until given its own.
  const TaskList again = TaskList::shifted_from(later, 1, 2);
  CHECK(again[1].id == 21);
  CHECK(again[1].rank == 3);
  // Changing one copies it with its own collective written out.
  later.push_back(Task::record(4));
  CHECK_FALSE(later.is_shared());
  CHECK(later[1].id == 21);
  CHECK(later[1].rank == 3);
  CHECK(base[1].id == 20);
}

TEST_CASE("a list's second own collective reads as that list's too, passed on and written out") {
  // ZeRO's gather of the experts' updated parameters after the rest's: each reader's own index (its
  // group's) and rank, beside the first.
  TaskList base{TaskList::own_collective(), TaskList::own_collective(1), Task::collective(5, 1)};
  TaskList later = TaskList::shifted_from(base, 10, 100);
  base.set_own_collective(20, 0);
  base.set_own_collective(40, 0, 1);
  later.set_own_collective(21, 3);
  later.set_own_collective(41, 3, 1);
  CHECK(later.same_tasks() == base.same_tasks());
  CHECK(base[1].id == 40);
  CHECK(later[0].id == 21);
  CHECK(later[1].id == 41);  // not shifted by 100
  CHECK(later[1].rank == 3);
  CHECK(later[2].id == 105);
  CHECK(later.own_collectives_beside() == 1);
  CHECK(TaskList::is_own_collective(later.stored()[1]));
  // A list shifted from it reads the same until given its own; changing one writes both out.
  const TaskList again = TaskList::shifted_from(later, 1, 2);
  CHECK(again[1].id == 41);
  later.push_back(Task::record(4));
  CHECK_FALSE(later.is_shared());
  CHECK(later[0].id == 21);
  CHECK(later[1].id == 41);
  CHECK(later[1].rank == 3);
  CHECK(later.own_collectives_beside() == 0);
  CHECK(base[1].id == 40);
  // Tasks holding one stored so make a shared list that reads it as given.
  const TaskList made = TaskList::with_own_collectives({Task::record(0), TaskList::own_collective(1)},
                                                       {Task::collective(7, 2), Task::collective(8, 2)});
  CHECK(made.is_shared());
  CHECK(made[1].id == 8);
  CHECK_FALSE(TaskList::with_own_collectives({Task::record(0)}, {}).is_shared());
}
