#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Installs dagre (npm) for bench/gui/dagre_render.py. Never run by the build.
set -e
cd "$(dirname "$0")"
npm install --ignore-scripts --no-audit --no-fund
