/*
 * The `volsched` subcommands. Each lives in its own file, src/cli/cmd_<name>.c,
 * takes argc/argv starting at the subcommand name, and returns the process
 * exit status: 0 success, 1 failure, 2 bad usage or bad input.
 *
 * To add a subcommand: write its file, declare it here, and add one row to
 * the table in main.c.
 */
#ifndef VOLSCHED_CLI_CMD_H
#define VOLSCHED_CLI_CMD_H

#define VS_EXIT_OK    0
#define VS_EXIT_FAIL  1
#define VS_EXIT_USAGE 2

int vs_cmd_version(int argc, char **argv);
int vs_cmd_init(int argc, char **argv);
int vs_cmd_app(int argc, char **argv);
int vs_cmd_user(int argc, char **argv);
int vs_cmd_team(int argc, char **argv);
int vs_cmd_create_work(int argc, char **argv);
int vs_cmd_keygen(int argc, char **argv);
int vs_cmd_sim(int argc, char **argv);
int vs_cmd_popsim(int argc, char **argv);
int vs_cmd_explain(int argc, char **argv);
int vs_cmd_serve(int argc, char **argv);
int vs_cmd_status(int argc, char **argv);
int vs_cmd_release(int argc, char **argv);
int vs_cmd_wu_check(int argc, char **argv);
int vs_cmd_workgen(int argc, char **argv);
int vs_cmd_locality_gen(int argc, char **argv);
int vs_cmd_locality_ws(int argc, char **argv);
int vs_cmd_job(int argc, char **argv);
int vs_cmd_result(int argc, char **argv);
int vs_cmd_host(int argc, char **argv);
int vs_cmd_purge(int argc, char **argv);
int vs_cmd_stop(int argc, char **argv);
int vs_cmd_start(int argc, char **argv);
int vs_cmd_client(int argc, char **argv);
int vs_cmd_store(int argc, char **argv);
int vs_cmd_db_dump(int argc, char **argv);
int vs_cmd_update_stats(int argc, char **argv);
/* popsim --credit (cmd_popsim_credit.c) */
int vs_cmd_popsim_credit(int argc, char **argv);
int vs_cmd_batch(int argc, char **argv);

#endif
