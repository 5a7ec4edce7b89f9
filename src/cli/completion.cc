#include "cli/completion.h"

#include <fmt/format.h>

#include <cctype>
#include <iostream>
#include <map>
#include <memory>
#include <string_view>

#include "catalog/catalog.h"
#include "cli/version.h"

namespace gf::cli {
namespace {

/// The flags given values with complete_with, in this process.
std::map<const CLI::Option*, CompletionValues>& registry() {
  static std::map<const CLI::Option*, CompletionValues> values;
  return values;
}

/// A word the script may hold unquoted: a name or an id, never shell syntax. A catalog may bring
/// ids of its own; one with other characters is left out of the completion, not escaped.
bool plain_word(const std::string& w) {
  if (w.empty()) return false;
  for (char c : w)
    if (!std::isalnum(static_cast<unsigned char>(c)) &&
        std::string_view("._:+/@%-").find(c) == std::string_view::npos)
      return false;
  return true;
}

std::string words(const std::vector<std::string>& ws) {
  std::string out;
  for (const auto& w : ws)
    if (plain_word(w)) out += (out.empty() ? "" : " ") + w;
  return out;
}

/// The subcommands a user sees (CLI11 hides those in the empty group), in --help's order.
std::vector<const CLI::App*> visible_subcommands(const CLI::App& root) {
  return root.get_subcommands([](const CLI::App* s) { return !s->get_group().empty(); });
}

/// The flag's names as typed: "-o --out".
std::vector<std::string> flag_names(const CLI::Option& o) {
  std::vector<std::string> out;
  for (const auto& s : o.get_snames()) out.push_back("-" + s);
  for (const auto& l : o.get_lnames()) out.push_back("--" + l);
  return out;
}

// The script's fixed part: everything that does not depend on the app. @SUBCOMMANDS@,
// @ROOT_FLAGS@, @COMMANDS@ and @VALUES@ are filled in.
constexpr const char* kScript =
    R"gfbash(# bash completion for gpufabric, written by `gpufabric completion bash` from the parser
# itself: the subcommands, their flags, and the values of the flags that take one of a
# closed set of names or a catalog id; file names otherwise. Generated: do not edit.
#   source <(gpufabric completion bash)    # try it in this shell
# Written by gpufabric @VERSION@.

_gpufabric_subcommands='@SUBCOMMANDS@'

# _gpufabric_command CMD: sets flags (every flag of CMD), valued (the flags that take a value)
# and positionals (how many positional arguments CMD declares); fails for an unknown CMD.
_gpufabric_command() {
  case $1 in
@COMMANDS@    *) return 1 ;;
  esac
}

# _gpufabric_values CMD FLAG, or CMD @N for the Nth positional (from 0): the values it takes,
# nothing when any file name does.
_gpufabric_values() {
  case "$1 $2" in
@VALUES@  esac
}

# _gpufabric_reply VALUES PREFIX CUR: the VALUES that start with CUR, or file names when VALUES
# is empty; each after PREFIX (for --flag=value typed as one word).
_gpufabric_reply() {
  if [[ -n $1 ]]; then
    COMPREPLY=($(compgen -P "$2" -W "$1" -- "$3"))
  else
    compopt -o filenames 2>/dev/null
    mapfile -t COMPREPLY < <(compgen -f -- "$3")
    [[ -n $2 ]] && COMPREPLY=("${COMPREPLY[@]/#/$2}")
  fi
  return 0
}

_gpufabric() {
  local cur=${COMP_WORDS[COMP_CWORD]} prev='' pre='' i
  ((COMP_CWORD > 0)) && prev=${COMP_WORDS[COMP_CWORD - 1]}
  # --flag=value: bash splits the word at '=' (it is in COMP_WORDBREAKS), or leaves it whole.
  if [[ $cur == '=' ]]; then
    cur=''
  elif [[ $prev == '=' ]] && ((COMP_CWORD > 1)); then
    prev=${COMP_WORDS[COMP_CWORD - 2]}
  elif [[ $cur == --*=* ]]; then
    prev=${cur%%=*} pre=${cur%%=*}= cur=${cur#*=}
  fi
  # The subcommand: the first word that is not a flag (gpufabric's own flags take no value).
  local cmd='' at=0
  for ((i = 1; i < COMP_CWORD; i++)); do
    [[ ${COMP_WORDS[i]} == -* ]] && continue
    cmd=${COMP_WORDS[i]} at=$i
    break
  done
  if [[ -z $cmd ]]; then
    if [[ $cur == -* ]]; then
      COMPREPLY=($(compgen -W '@ROOT_FLAGS@' -- "$cur"))
    else
      COMPREPLY=($(compgen -W "$_gpufabric_subcommands" -- "$cur"))
    fi
    return 0
  fi
  local flags='' valued='' positionals=0
  _gpufabric_command "$cmd" || return 0
  if [[ -n $prev && " $valued " == *" $prev "* ]]; then
    _gpufabric_reply "$(_gpufabric_values "$cmd" "$prev")" "$pre" "$cur"
    return 0
  fi
  if [[ $cur == -* ]] || ((positionals == 0)); then
    COMPREPLY=($(compgen -W "$flags" -- "$cur"))
    return 0
  fi
  # A positional: count the words since the subcommand that are neither flags nor their values.
  local n=0 w
  for ((i = at + 1; i < COMP_CWORD; i++)); do
    w=${COMP_WORDS[i]}
    if [[ $w == '=' ]]; then
      ((i++))
    elif [[ $w == -* ]]; then
      [[ $w != *=* && " $valued " == *" $w "* && ${COMP_WORDS[i + 1]} != '=' ]] && ((i++))
    else
      ((n++))
    fi
  done
  _gpufabric_reply "$(_gpufabric_values "$cmd" "@$n")" '' "$cur"
}

complete -F _gpufabric gpufabric
)gfbash";

void fill(std::string& s, const std::string& key, const std::string& value) {
  s.replace(s.find(key), key.size(), value);
}

}  // namespace

CLI::Option* complete_with(CLI::Option* option, CompletionValues values) {
  registry()[option] = std::move(values);
  return option;
}

std::vector<std::string> completion_values(const CLI::Option* option) {
  const auto it = registry().find(option);
  return it == registry().end() ? std::vector<std::string>{} : it->second();
}

std::vector<std::string> catalog_nic_ids() {
  auto catalog = builtin_catalog();
  return catalog ? catalog->nic_ids() : std::vector<std::string>{};
}

std::string bash_completion(const CLI::App& root) {
  std::vector<std::string> names, root_flags;
  std::string commands, values;
  for (const CLI::Option* o : root.get_options())
    for (const auto& n : flag_names(*o)) root_flags.push_back(n);
  for (const CLI::App* sub : visible_subcommands(root)) {
    const std::string& name = sub->get_name();
    names.push_back(name);
    std::vector<std::string> flags, valued;
    int positionals = 0;
    for (const CLI::Option* o : sub->get_options()) {
      const auto vals = completion_values(o);
      if (!o->nonpositional()) {  // a positional only
        if (!vals.empty())
          values += fmt::format("    '{} @{}') echo '{}' ;;\n", name, positionals, words(vals));
        ++positionals;
        continue;
      }
      const auto ns = flag_names(*o);
      flags.insert(flags.end(), ns.begin(), ns.end());
      if (o->get_expected_max() == 0) continue;  // a flag without a value
      valued.insert(valued.end(), ns.begin(), ns.end());
      if (!vals.empty())
        for (const auto& n : ns)
          values += fmt::format("    '{} {}') echo '{}' ;;\n", name, n, words(vals));
    }
    commands += fmt::format("    {}) flags='{}' valued='{}' positionals={} ;;\n", name,
                            words(flags), words(valued), positionals);
  }
  std::string script = kScript;
  fill(script, "@VERSION@", build_version());
  fill(script, "@SUBCOMMANDS@", words(names));
  fill(script, "@COMMANDS@", commands);
  fill(script, "@VALUES@", values);
  fill(script, "@ROOT_FLAGS@", words(root_flags));
  return script;
}

Command add_completion(CLI::App& root) {
  static constexpr const char* kShells[] = {"bash"};
  auto shell = std::make_shared<std::string>();
  CLI::App* a = root.add_subcommand(
      "completion",
      "Print the shell completion script: subcommands, flags, and the values of the flags that "
      "take a name of a closed set or a catalog id. The package installs it; to try it: "
      "source <(gpufabric completion bash).");
  complete_with(
      a->add_option("SHELL", *shell, "the shell: bash")
          ->required()
          ->check(CLI::IsMember(std::vector<std::string>(std::begin(kShells), std::end(kShells)))),
      [] { return std::vector<std::string>(std::begin(kShells), std::end(kShells)); });
  return {a, [&root, shell] {
            std::cout << bash_completion(root);
            return kExitOk;
          }};
}

}  // namespace gf::cli
