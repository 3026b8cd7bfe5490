// ddtkit: the command-line front of the project (DESIGN.md, tools/). `ddtkit <command> [args]`
// runs one subcommand from the table below; `ddtkit help [command]` lists them. A new
// subcommand is a new file with its run function and one row here.
#include <cstdio>
#include <cstring>

#include "commands.hpp"

namespace {

int help_command(int argc, char** argv);

const Command commands[] = {
    {"bench", "[--suite S] [--smoke] [--full] [--out DIR]",
     "benchmark ddtkit against memcpy and the hand-written loop (no MPI), JSON lines to DIR/ddtkit.jsonl",
     bench_details, bench_command},
    {"run", "-n N prog [args]", "start N processes of prog as one job of the intra-node runtime (ddt_comm_*)",
     run_details, run_command},
    {"inspect", "TYPE | -f FILE | - | --kernel NAME | --layout FILE [--png FILE] [options]",
     "show a type: size, bounds, canonical layout, hash, notation, pieces; --png draws its typemap",
     inspect_details, inspect_command},
    {"spin", "[--strategy S] [--vector B,S,M | --kernel NAME] [--send] [model options] | --figures DIR | --calibrate",
     "the sPIN NIC offload model: throughput, handler times, NIC memory, DMA queue, byte check",
     spin_details, spin_command},
    {"help", "[command]", "this text, or one command's options", nullptr, help_command},
};

const Command* find_command(const char* name) {
  for (const Command& c : commands)
    if (!std::strcmp(c.name, name)) return &c;
  return nullptr;
}

int help_command(int argc, char** argv) {
  if (argc > 2) {
    std::fprintf(stderr, "ddtkit help: one command at most\n");
    print_usage(nullptr, true);
    return 2;
  }
  if (argc == 2 && !find_command(argv[1])) {
    std::fprintf(stderr, "ddtkit help: unknown command '%s'\n", argv[1]);
    print_usage(nullptr, true);
    return 2;
  }
  print_usage(argc == 2 ? argv[1] : nullptr, false);
  return 0;
}

}  // namespace

void print_usage(const char* name_or_null, bool to_stderr) {
  FILE* out = to_stderr ? stderr : stdout;
  if (const Command* c = name_or_null ? find_command(name_or_null) : nullptr) {
    std::fprintf(out, "usage: ddtkit %s %s\n  %s\n%s", c->name, c->args, c->summary, c->details ? c->details() : "");
    return;
  }
  std::fprintf(out, "usage: ddtkit <command> [args]\n\ncommands:\n");
  for (const Command& c : commands) std::fprintf(out, "  %-7s %s\n          %s\n", c.name, c.args, c.summary);
}

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "ddtkit: no command given\n");
    print_usage(nullptr, true);
    return 2;
  }
  const Command* c = find_command(argv[1]);
  if (!c) {
    std::fprintf(stderr, "ddtkit: unknown command '%s'\n", argv[1]);
    print_usage(nullptr, true);
    return 2;
  }
  // `ddtkit CMD --help` (or -h) right after the command is `ddtkit help CMD`, for every command.
  // Only there: after other arguments it may belong to them (`ddtkit run -n 2 prog --help` is
  // prog's). inspect also takes it anywhere, its arguments being its own.
  if (argc >= 3 && (!std::strcmp(argv[2], "--help") || !std::strcmp(argv[2], "-h"))) {
    print_usage(c->name, false);
    return 0;
  }
  return c->run(argc - 1, argv + 1);
}
