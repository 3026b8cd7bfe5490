// The subcommands of the ddtkit command. Each lives in its own file and is listed once in
// main.cpp's table; it gets the arguments after its name and returns the exit status.
#pragma once

struct Command {
  const char* name;
  const char* args;     // its arguments, for the usage line
  const char* summary;  // one line for `ddtkit help`
  const char* (*details)();  // its options, for `ddtkit help <name>` (nullptr: none)
  int (*run)(int argc, char** argv);  // argv[0] is the subcommand's name
};

int bench_command(int argc, char** argv);
const char* bench_details();
int run_command(int argc, char** argv);
const char* run_details();
int inspect_command(int argc, char** argv);
const char* inspect_details();
int spin_command(int argc, char** argv);  // the NIC offload model (issue 14)
const char* spin_details();

// The usage text (every subcommand) on out; for a subcommand's own option errors.
void print_usage(const char* name_or_null, bool to_stderr);
