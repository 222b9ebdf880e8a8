// Writes a small trace session as LOGDIR/train/plugins/profile/<session>/<host>.xplane.pb
// (and the Chrome trace beside it) for xplane_xprof_test.py: on the main thread a
// "train_step" range (category step, arg 7) holding "dense/matmul" then "loss" (category
// kernel), and on a second thread named "prefetch" one "prefetch/produce" (category
// input). Prints the .xplane.pb path.
#include <chrono>
#include <cstdio>
#include <thread>

#include "nnfit/core/trace.h"
#include "nnfit/profile/chrome_trace.h"
#include "nnfit/profile/xplane.h"

int main(int argc, char** argv) {
  using namespace nnfit;
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s LOGDIR\n", argv[0]);
    return 2;
  }
  trace::start();
  trace::set_thread_name("main");
  {
    TraceRange step("train_step", "step", 7);
    {
      TraceRange k("dense/matmul", "kernel");
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    {
      TraceRange k("loss", "kernel");
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  std::thread t([] {
    trace::set_thread_name("prefetch");
    TraceRange p("prefetch/produce", "input");
    std::this_thread::sleep_for(std::chrono::milliseconds(3));
  });
  t.join();
  trace::stop();
  const trace::Collected c = trace::collect();
  const std::string chrome = profile::write_chrome_trace(c, argv[1]);
  std::printf("%s\n", profile::write_xplane(c, chrome.substr(0, chrome.rfind('/'))).c_str());
  return 0;
}
