// Transparent huge pages for the heap of a large run.
//
// A step over tens of thousands of GPUs touches gigabytes of heap once (programs, execution records,
// the network's state): dp 32,768 x mp 2 on 8,192 DGX H100 takes about 956,000 minor page faults of
// 4 KiB, 7.6 of its 32.3 s of CPU on the development machine, and huge pages take 19.5 s in all
// (README, performance table, "Huge pages"). glibc backs its heap with transparent huge
// pages when told by its tunable glibc.malloc.hugetlb=1, read only at program start, so hybridsim
// re-executes itself once with it set. It changes no output; it does nothing where the kernel's
// transparent huge pages are off, the variable GLIBC_TUNABLES already names the tunable,
// HYBRIDSIM_NO_HUGE_PAGES is set, or the program runs under Valgrind (which would lose the child).
#pragma once

namespace hybridsim::cli {

// Returns only where it does not re-execute (or re-executing failed): call it first in main.
void use_huge_pages(char** argv);

}  // namespace hybridsim::cli
