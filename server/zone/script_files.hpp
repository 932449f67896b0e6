// The game's rules as files: every *.lua file of game.scripts_dir, in name order, read
// for the script host (bounded: a directory of scripts is the game team's, but a wrong
// path must not make the zone read a disk).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "script/script_config.hpp"

namespace zone {

inline constexpr std::size_t kMaxScriptFiles = 256;
inline constexpr std::size_t kMaxScriptFileBytes = 1024 * 1024;

// Throws std::runtime_error naming the directory or file when the directory cannot be
// read, holds no *.lua file, more than kMaxScriptFiles, or a file that is not a regular
// file or is larger than kMaxScriptFileBytes. "" gives no files (no rules).
std::vector<script::ScriptFile> read_script_dir(const std::string& dir);

}  // namespace zone
