"""Distinct words in order of first appearance.

Input: a count n, then n words, one per line. Output: how many distinct words there were, then each of
them once, in the order they first appeared.
"""


def main():
    n = int(input())
    seen = []
    for _ in range(n):
        word = input().strip()
        if word not in seen:
            seen.append(word)
    print(len(seen))
    for word in seen:
        print(word)


if __name__ == "__main__":
    main()
