#include "game/action_answer.hpp"

#include <string_view>

namespace zone::game {

ActionAnswer read_action_answer(const script::CallResult& result) {
  using protocol::ActionStatus;
  if (result.is_nil(0)) return {};
  if (const auto flag = result.boolean(0)) {
    return *flag ? ActionAnswer{} : ActionAnswer{ActionStatus::NotAllowed, false};
  }
  static constexpr struct {
    std::string_view reason;
    ActionStatus status;
  } kReasons[] = {
      {"out_of_range", ActionStatus::OutOfRange},
      {"cooldown", ActionStatus::Cooldown},
      {"dead", ActionStatus::Dead},
      {"no_line_of_sight", ActionStatus::NoLineOfSight},
      {"not_allowed", ActionStatus::NotAllowed},
      {"no_target", ActionStatus::NoTarget},
      {"bad_arguments", ActionStatus::BadArguments},
  };
  if (const auto reason = result.string(0)) {
    for (const auto& r : kReasons) {
      if (r.reason == *reason) return {r.status, true};
    }
  }
  return {ActionStatus::NotAllowed, false};
}

}  // namespace zone::game
