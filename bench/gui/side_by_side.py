#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Puts two pictures side by side under captions (docs/screenshots/*_vs_dagre.png).

  side_by_side.py LEFT.png "left caption" RIGHT.png "right caption" --out OUT.png
"""
import argparse
import sys

from PIL import Image, ImageDraw, ImageFont

FONT = '/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf'


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('left')
    ap.add_argument('left_caption')
    ap.add_argument('right')
    ap.add_argument('right_caption')
    ap.add_argument('--out', required=True)
    args = ap.parse_args()
    try:
        a, b = Image.open(args.left).convert('RGB'), Image.open(args.right).convert('RGB')
    except OSError as e:
        sys.exit(f'side_by_side.py: {e}')
    cap, gap = 30, 10
    w, h = a.width + gap + b.width, cap + max(a.height, b.height)
    out = Image.new('RGB', (w, h), (255, 255, 255))
    out.paste(a, (0, cap))
    out.paste(b, (a.width + gap, cap))
    d = ImageDraw.Draw(out)
    font = ImageFont.truetype(FONT, 15)
    d.rectangle([0, 0, w, cap - 1], fill=(236, 238, 242))
    d.text((8, 6), args.left_caption, font=font, fill=(20, 20, 20))
    d.text((a.width + gap + 8, 6), args.right_caption, font=font, fill=(20, 20, 20))
    d.rectangle([a.width, 0, a.width + gap - 1, h], fill=(120, 124, 132))
    out.save(args.out)


if __name__ == '__main__':
    main()
