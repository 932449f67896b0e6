// ScriptHost: the zone's current ScriptVm and its hot reload. A reload builds a fresh VM
// beside the current one; only a VM whose files all loaded (and whose on_load, if any,
// ran) replaces it, so a bad edit leaves the running rules untouched.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>

#include "script/script_config.hpp"
#include "script/script_error.hpp"
#include "script/script_vm.hpp"

namespace zone::script {

class ScriptHost {
 public:
  // Installs the host's functions (the game API) into a new VM before its files load;
  // an error fails the reload.
  using Binder = std::function<std::optional<ScriptError>(ScriptVm&)>;

  // Starts with an empty VM (no files: every handler is missing), bound by `binder`.
  ScriptHost(const ScriptLimits& limits, ScriptOptions options, Binder binder = {});

  // Builds a new VM with the host's limits and options, binds it, loads `files` into it
  // and calls its on_load() handler when it defines one. On success the new VM replaces
  // the current one (the old one and its Lua state are freed); on failure the current VM
  // stays as it was and the error (file:line) is returned. Call it between ticks: the
  // new VM starts with a fresh tick budget. While it runs, both VMs hold memory (up to
  // twice the memory budget).
  std::optional<ScriptError> reload(std::span<const ScriptFile> files);

  ScriptVm& vm() { return vm_; }
  const ScriptVm& vm() const { return vm_; }

  std::uint64_t reloads() const { return reloads_; }                  // successful
  std::uint64_t reload_failures() const { return reload_failures_; }  // current VM kept
  // The counters of every VM this host has run (a failed reload's excepted), so that
  // they only grow across reloads; memory_in_use is the current VM's, memory_peak the
  // highest of any.
  ScriptStats stats() const;

 private:
  ScriptLimits limits_;
  ScriptOptions options_;
  Binder binder_;
  ScriptVm vm_;
  ScriptStats retired_;  // the replaced VMs' counters, summed
  std::uint64_t reloads_ = 0;
  std::uint64_t reload_failures_ = 0;
};

}  // namespace zone::script
