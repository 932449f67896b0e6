// ScriptHost: reload into a fresh VM, swap only on success, counters kept across swaps.
#include "script/script_host.hpp"

#include <algorithm>
#include <utility>

namespace zone::script {
namespace {

ScriptVm make_bound_vm(const ScriptLimits& limits, const ScriptOptions& options,
                       const ScriptHost::Binder& binder, std::optional<ScriptError>& error) {
  ScriptVm vm(limits, options);
  if (binder) error = binder(vm);
  return vm;
}

}  // namespace

ScriptHost::ScriptHost(const ScriptLimits& limits, ScriptOptions options, Binder binder)
    : limits_(limits),
      options_(std::move(options)),
      binder_(std::move(binder)),
      vm_(limits_, options_) {
  // A binder that fails on an empty VM fails every reload too; the empty VM still runs
  // nothing, so there is nothing to report here.
  if (binder_) static_cast<void>(binder_(vm_));
}

std::optional<ScriptError> ScriptHost::reload(std::span<const ScriptFile> files) {
  std::optional<ScriptError> error;
  ScriptVm next = make_bound_vm(limits_, options_, binder_, error);
  if (!error) error = next.load_files(files);
  if (!error) {
    const CallResult loaded = next.call("on_load");
    if (loaded.status == CallStatus::kError) error = loaded.error;
  }
  if (error) {
    ++reload_failures_;
    return error;
  }
  const ScriptStats& old = vm_.stats();
  retired_.calls += old.calls;
  retired_.errors += old.errors;
  retired_.budget_exceeded += old.budget_exceeded;
  retired_.memory_refusals += old.memory_refusals;
  retired_.skipped_over_budget += old.skipped_over_budget;
  retired_.missing_handlers += old.missing_handlers;
  retired_.instructions += old.instructions;
  retired_.memory_peak = std::max(retired_.memory_peak, old.memory_peak);
  vm_ = std::move(next);
  ++reloads_;
  return std::nullopt;
}

ScriptStats ScriptHost::stats() const {
  const ScriptStats& now = vm_.stats();
  ScriptStats sum = retired_;
  sum.calls += now.calls;
  sum.errors += now.errors;
  sum.budget_exceeded += now.budget_exceeded;
  sum.memory_refusals += now.memory_refusals;
  sum.skipped_over_budget += now.skipped_over_budget;
  sum.missing_handlers += now.missing_handlers;
  sum.instructions += now.instructions;
  sum.memory_in_use = now.memory_in_use;
  sum.memory_peak = std::max(retired_.memory_peak, now.memory_peak);
  return sum;
}

}  // namespace zone::script
