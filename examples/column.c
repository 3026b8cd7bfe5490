/* Pack column 2 of a 4 x 5 row-major matrix, then unpack it into another matrix. */
#include <stdio.h>
#include <ddtkit.h>

int main(void) {
  double m[4][5], col[4], back[4][5] = {{0}};
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 5; ++j) m[i][j] = 10 * i + j;

  ddt_type column; /* 4 blocks of 1 double, 5 doubles apart */
  if (ddt_type_vector(4, 1, 5, DDT_DOUBLE, &column) || ddt_type_commit(column)) return 1;

  int64_t packed, unpacked;
  int err = ddt_pack(&m[0][2], 1, column, 0, col, sizeof col, &packed);
  if (!err) err = ddt_unpack(col, packed, &back[0][2], 1, column, 0, &unpacked);
  if (err) { fprintf(stderr, "ddtkit: %s\n", ddt_error_string(err)); return 1; }

  printf("packed %lld bytes: %g %g %g %g\n", (long long)packed, col[0], col[1], col[2], col[3]);
  ddt_type_free(&column);
  return back[3][2] == 32.0 ? 0 : 1;
}
