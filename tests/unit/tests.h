/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
#ifndef MTHPCTL_TESTS_H
#define MTHPCTL_TESTS_H
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

int run_parse_tests(void);
int run_json_tests(void);
int run_sysfs_tests(void);
int run_cgroup_tests(void);
int run_pin_tests(void);
int run_policy_tests(void);
int run_bench_tests(void);
int run_bench_rounds_tests(void);
int run_interval_tests(void);
int run_status_tests(void);
int run_needs_tests(void);
int run_apply_tests(void);
int run_object_tests(void);
#endif
