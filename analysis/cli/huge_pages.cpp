#include "analysis/cli/huge_pages.h"

#include <cstdlib>
#include <string>

#if defined(__linux__) && defined(__GLIBC__)
#include <unistd.h>
#endif

namespace hybridsim::cli {

void use_huge_pages(char** argv) {
#if defined(__linux__) && defined(__GLIBC__)
  if (std::getenv("HYBRIDSIM_NO_HUGE_PAGES") != nullptr) return;
  // Valgrind runs the program with its preload library; an exec would leave it (and its counts).
  if (const char* preload = std::getenv("LD_PRELOAD");
      preload != nullptr && std::string(preload).find("vgpreload") != std::string::npos)
    return;
  const char* given = std::getenv("GLIBC_TUNABLES");
  const std::string tunables = given != nullptr ? given : "";
  if (tunables.find("glibc.malloc.hugetlb") != std::string::npos) return;  // the user's, or ours
  const std::string wanted = (tunables.empty() ? "" : tunables + ":") + "glibc.malloc.hugetlb=1";
  if (setenv("GLIBC_TUNABLES", wanted.c_str(), 1) != 0) return;
  execv("/proc/self/exe", argv);
  // No /proc (or no exec): run on with small pages, the environment as it was.
  if (given != nullptr)
    setenv("GLIBC_TUNABLES", tunables.c_str(), 1);
  else
    unsetenv("GLIBC_TUNABLES");
#else
  (void)argv;
#endif
}

}  // namespace hybridsim::cli
