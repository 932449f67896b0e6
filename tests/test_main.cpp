// Shared doctest main for every test binary.
//
// CTest runs each test case as its own process with --test-case=NAME. doctest splits
// that filter at commas, so a name with a comma would match nothing and the run would
// "pass" having tested nothing. The listener below makes a filtered run that executes no
// test case fail loudly instead.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>

namespace {

int g_cases_started = 0;  // written by the listener, read once in main (test-only global)

struct CountingListener : doctest::IReporter {
  explicit CountingListener(const doctest::ContextOptions&) {}
  void report_query(const doctest::QueryData&) override {}
  void test_run_start() override {}
  void test_run_end(const doctest::TestRunStats&) override {}
  void test_case_start(const doctest::TestCaseData&) override { ++g_cases_started; }
  void test_case_reenter(const doctest::TestCaseData&) override {}
  void test_case_end(const doctest::CurrentTestCaseStats&) override {}
  void test_case_exception(const doctest::TestCaseException&) override {}
  void subcase_start(const doctest::SubcaseSignature&) override {}
  void subcase_end() override {}
  void log_assert(const doctest::AssertData&) override {}
  void log_message(const doctest::MessageData&) override {}
  void test_case_skipped(const doctest::TestCaseData&) override {}
};

}  // namespace

DOCTEST_REGISTER_LISTENER("counting", 1, CountingListener);

int main(int argc, char** argv) {
  doctest::Context context(argc, argv);
  const int result = context.run();
  if (context.shouldExit()) return result;
  if (g_cases_started == 0) {
    std::fprintf(stderr,
                 "error: no test case matched the filters (a comma or semicolon in a "
                 "test name breaks CTest's --test-case filter)\n");
    return 1;
  }
  return result;
}
