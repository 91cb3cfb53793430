/* gnuplot_run.h: render a chart by running gnuplot on a script file, never through a shell. */
#ifndef AGENTXDP_GNUPLOT_RUN_H
#define AGENTXDP_GNUPLOT_RUN_H

#include <stddef.h>

/*
 * Run `gnuplot SCRIPT` with its working directory set to the folder DIRFD (so the script
 * names its data and output files relatively); DIR names that folder in messages. gnuplot
 * follows symbolic links when it writes its output, so DIRFD must be a private folder of
 * ours (output_private_dir()). Returns 0, or -1 with a one-line reason in err.
 * Untrusted text (trace addresses, link names) never reaches an argv or a shell: it is
 * written into data files that the script reads, or quoted by gnuplot_quote().
 */
int gnuplot_run(int dirfd, const char *dir, const char *script, char *err, size_t errlen);

/* Is gnuplot installed? */
int gnuplot_available(void);

/*
 * Copy s into out as a gnuplot single-quoted string body (quotes doubled, control
 * characters dropped) so a label cannot break out of the script. Returns out.
 */
char *gnuplot_quote(const char *s, char *out, size_t outlen);

#endif
