/* The build tag of a server's second version (Makefile UPDATE_V2): linked before the
 * runtime, it replaces service.c's empty default, so the binary differs and says so. */
const char ax_build_tag[] = "v2";
