/* dtsim command line: parses the subcommand, dispatches, maps results to exit codes. */
#include "sim/dt_cli.h"

int main(int argc, char **argv)
{
  return dt_cli_main(argc, argv);
}
