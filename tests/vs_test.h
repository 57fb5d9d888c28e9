/*
 * The one include every unit test starts with: cmocka needs these system
 * headers before its own, in this order, which a sorted include block would
 * break.
 */
#ifndef VOLSCHED_TESTS_VS_TEST_H
#define VOLSCHED_TESTS_VS_TEST_H

// clang-format off
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
// clang-format on

#endif
