#include "analysis/output/plot_gnuplot.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <vector>

#include "analysis/output/atomic_file.h"
#include "sim/text.h"

extern char** environ;

namespace hybridsim::analysis {
namespace {

struct Captured {
  int exit_code = -1;  // -1: could not start or was killed
  std::string output;  // stdout and stderr together
};

// Runs `program args...` with stdin from /dev/null, collecting its output in a temporary file of
// `scratch_dir`.
Captured run_captured(const std::string& program, const std::vector<std::string>& args,
                      const std::filesystem::path& scratch_dir) {
  Captured c;
  std::string pattern = (scratch_dir / ".gnuplot-output-XXXXXX").string();
  const int fd = mkstemp(pattern.data());
  if (fd < 0) {
    c.output = "cannot create a temporary file in " + scratch_dir.string() + ": " + std::strerror(errno);
    return c;
  }
  std::vector<std::string> owned{program};
  owned.insert(owned.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : owned) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, fd, 1);
  posix_spawn_file_actions_adddup2(&actions, fd, 2);
  pid_t pid = 0;
  const int rc = posix_spawnp(&pid, program.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    c.output = "cannot run " + program + ": " + std::strerror(rc);
  } else {
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    c.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    std::ifstream in(pattern);
    std::stringstream text;
    text << in.rdbuf();
    c.output = sim::trim(text.str());
  }
  close(fd);
  unlink(pattern.c_str());
  return c;
}

std::string terminal_for(const PlotRequest& r) {
  const std::string size = std::to_string(r.width) + "," + std::to_string(r.height);
  if (r.target.extension() == ".svg")
    return "set terminal svg size " + size + " dynamic background rgb 'white'";
  return "set terminal pngcairo size " + size + " font 'sans,11'";
}

}  // namespace

std::string gnuplot_quote(const std::string& text) {
  std::string out = "'";
  for (const char ch : text) {
    if (ch == '\'') out += '\'';
    out += ch;
  }
  return out + "'";
}

GnuplotStatus find_gnuplot(const std::string& program) {
  GnuplotStatus s;
  s.program = program;
  const auto scratch = std::filesystem::temp_directory_path();
  const Captured version = run_captured(program, {"--version"}, scratch);
  if (version.exit_code != 0) {
    s.why_not = version.output.empty() ? program + " --version failed" : version.output;
    return s;
  }
  s.version = version.output;
  const Captured terminal = run_captured(program, {"-e", "set terminal pngcairo"}, scratch);
  if (terminal.exit_code != 0) {
    s.why_not = s.version + " has no pngcairo terminal: " + terminal.output;
    return s;
  }
  s.available = true;
  return s;
}

void remove_stale_plot(const std::filesystem::path& target, bool script_too) {
  std::error_code ec;
  if (std::filesystem::is_regular_file(target, ec)) std::filesystem::remove(target, ec);
  const std::filesystem::path script = target.string() + ".gp";
  if (script_too && std::filesystem::is_regular_file(script, ec)) std::filesystem::remove(script, ec);
}

namespace {

PlotOutcome draw(const GnuplotStatus& gnuplot, const PlotRequest& request) {
  PlotOutcome out;
  const std::filesystem::path dir = request.target.parent_path().empty() ? "." : request.target.parent_path();
  const std::string header = "# Rendered by hybridsim with gnuplot: gnuplot " +
                             request.target.filename().string() + ".gp\n" + terminal_for(request) + "\n";
  {
    AtomicFile script(request.target.string() + ".gp");
    script.write(header + "set output " + gnuplot_quote(request.target.filename().string()) + "\n" +
                 request.body + "\n");
    script.commit();
  }
  if (!gnuplot.available) {
    out.error = "gnuplot is not available: " + gnuplot.why_not;
    return out;
  }
  // The picture is drawn into a temporary name of the same folder, then renamed into place.
  std::string picture = (dir / ("." + request.target.filename().string() + ".tmp-XXXXXX")).string();
  const int fd = mkstemp(picture.data());
  if (fd < 0) {
    out.error = "cannot create a temporary file in " + dir.string() + ": " + std::strerror(errno);
    return out;
  }
  fchmod(fd, 0644);  // mkstemp creates 0600; a picture is for everyone to read
  close(fd);
  std::string run_script = picture + ".gp";
  {
    std::ofstream s(run_script);
    s << header << "set output " << gnuplot_quote(picture) << "\n" << request.body << "\nunset output\n";
    if (!s) {
      out.error = "cannot write " + run_script;
      unlink(picture.c_str());
      return out;
    }
  }
  const Captured c = run_captured(gnuplot.program, {run_script}, dir);
  unlink(run_script.c_str());
  std::error_code ec;
  if (c.exit_code != 0 || std::filesystem::file_size(picture, ec) == 0 || ec) {
    out.error = c.output.empty() ? "gnuplot failed" : c.output;
    unlink(picture.c_str());
    return out;
  }
  std::filesystem::rename(picture, request.target, ec);
  if (ec) {
    out.error = "cannot rename " + picture + " to " + request.target.string() + ": " + ec.message();
    unlink(picture.c_str());
    return out;
  }
  out.ok = true;
  return out;
}

}  // namespace

PlotOutcome render_plot(const GnuplotStatus& gnuplot, const PlotRequest& request) {
  PlotOutcome out = draw(gnuplot, request);
  if (!out.ok) remove_stale_plot(request.target, /*script_too=*/false);  // this run's script stays
  return out;
}

}  // namespace hybridsim::analysis
